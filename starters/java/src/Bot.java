// A starter bot in Java (11+, no dependencies): random legal moves, every variant.
// The referee writes one JSON object per line to stdin; answer `hello` with a hello and every
// `turn` with one line echoing its `id`; nothing else needs an answer. Exit on `bye` or at end of
// input. Debug output goes to stderr only (System.err).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public final class Bot {
    private static final Random RNG = new Random();
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String askMode = "card";
        boolean please = false;
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Object> msg;
            try {
                msg = Json.object(line);
            } catch (RuntimeException e) {
                System.err.println("not JSON: " + e.getMessage());
                continue;
            }
            String type = String.valueOf(msg.get("type"));
            switch (type) {
                case "hello":
                    OUT.println("{\"type\":\"hello\",\"protocol\":1,\"name\":\"JavaStarter\",\"version\":\"1\"}");
                    break;
                case "start": {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> rules = (Map<String, Object>) msg.get("rules");
                    askMode = String.valueOf(rules.getOrDefault("ask", "card"));
                    please = Boolean.TRUE.equals(rules.get("please"));
                    break;
                }
                case "turn": {
                    // replace these random choices with your strategy
                    long id = ((Number) msg.get("id")).longValue();
                    String decide = (String) msg.get("decide");
                    List<?> options = (List<?>) msg.get("options");
                    String choice = Json.quote((String) options.get(RNG.nextInt(options.size())));
                    if (!decide.equals("ask")) {
                        OUT.println("{\"type\":\"" + decide + "\",\"id\":" + id + ",\"card\":" + choice + "}");
                        break;
                    }
                    List<?> targets = (List<?>) msg.get("targets");
                    long target = ((Number) targets.get(RNG.nextInt(targets.size()))).longValue();
                    String field = askMode.equals("family") ? "family" : "card";
                    OUT.println("{\"type\":\"ask\",\"id\":" + id + ",\"target\":" + target + ",\"" + field + "\":"
                            + choice + (please ? ",\"please\":true" : "") + "}");
                    break;
                }
                case "error":
                    System.err.println("referee error: " + msg.get("fault") + " " + msg.get("detail"));
                    break;
                case "bye":
                    return;
                default:
                    break; // event, end and anything new: nothing to answer
            }
        }
    }

    /** A small JSON reader (objects, arrays, strings, numbers, true/false/null) and a string quoter. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(String text) {
            Object v = new Json(text).value();
            if (!(v instanceof Map)) throw new RuntimeException("not an object: " + text);
            return (Map<String, Object>) v;
        }

        static String quote(String text) {
            StringBuilder b = new StringBuilder("\"");
            for (char c : text.toCharArray()) {
                if (c == '"' || c == '\\') b.append('\\').append(c);
                else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                else b.append(c);
            }
            return b.append('"').toString();
        }

        private void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
        }

        private Object value() {
            ws();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                ws();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    ws();
                    String k = string();
                    ws();
                    i++; // ':'
                    m.put(k, value());
                    ws();
                    if (s.charAt(i++) == '}') return m;
                }
            }
            if (c == '[') {
                List<Object> a = new ArrayList<>();
                i++;
                ws();
                if (s.charAt(i) == ']') { i++; return a; }
                while (true) {
                    a.add(value());
                    ws();
                    if (s.charAt(i++) == ']') return a;
                }
            }
            if (c == '"') return string();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String num = s.substring(start, i);
            if (num.isEmpty()) throw new RuntimeException("unexpected " + c + " at " + start);
            return num.matches("-?\\d+") ? (Object) Long.parseLong(num) : (Object) Double.parseDouble(num);
        }

        private String string() {
            StringBuilder b = new StringBuilder();
            i++; // '"'
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') return b.toString();
                if (c != '\\') { b.append(c); continue; }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e);
                }
            }
        }
    }
}
