// A starter bot in C# (mono's mcs or dotnet, no packages): random legal moves, every variant.
// The referee writes one JSON object per line to stdin; answer `hello` with a hello and every
// `turn` with one line echoing its `id`; nothing else needs an answer. Exit on `bye` or at end of
// input. Debug output goes to stderr only (Console.Error).
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

public static class Bot
{
    // a seed of its own: mono's default seed reads a device the sandbox may not offer
    static readonly Random Rng = new Random((int)(DateTime.UtcNow.Ticks & 0x7fffffff));

    public static int Main()
    {
        var stdout = new System.IO.StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false)) { AutoFlush = true };
        var stdin = new System.IO.StreamReader(Console.OpenStandardInput(), new UTF8Encoding(false));
        string askMode = "card";
        bool please = false;
        string line;
        while ((line = stdin.ReadLine()) != null)
        {
            Dictionary<string, object> msg;
            try { msg = (Dictionary<string, object>)new Json(line).Value(); }
            catch (Exception e) { Console.Error.WriteLine("not JSON: " + e.Message); continue; }
            object typeValue;
            msg.TryGetValue("type", out typeValue);
            switch (typeValue as string)
            {
                case "hello":
                    stdout.WriteLine("{\"type\":\"hello\",\"protocol\":1,\"name\":\"CSharpStarter\",\"version\":\"1\"}");
                    break;
                case "start":
                {
                    var rules = (Dictionary<string, object>)msg["rules"];
                    object ask, pl;
                    askMode = rules.TryGetValue("ask", out ask) ? ask as string ?? "card" : "card";
                    please = rules.TryGetValue("please", out pl) && pl is bool && (bool)pl;
                    break;
                }
                case "turn":
                {
                    // replace these random choices with your strategy
                    long id = Convert.ToInt64(msg["id"], CultureInfo.InvariantCulture);
                    string decide = (string)msg["decide"];
                    var options = (List<object>)msg["options"];
                    string choice = Json.Quote((string)options[Rng.Next(options.Count)]);
                    if (decide != "ask")
                    {
                        stdout.WriteLine("{\"type\":\"" + decide + "\",\"id\":" + id + ",\"card\":" + choice + "}");
                        break;
                    }
                    var targets = (List<object>)msg["targets"];
                    long target = Convert.ToInt64(targets[Rng.Next(targets.Count)], CultureInfo.InvariantCulture);
                    string field = askMode == "family" ? "family" : "card";
                    stdout.WriteLine("{\"type\":\"ask\",\"id\":" + id + ",\"target\":" + target + ",\"" + field + "\":"
                        + choice + (please ? ",\"please\":true" : "") + "}");
                    break;
                }
                case "error":
                    Console.Error.WriteLine("referee error: " + msg["fault"] + " " + msg["detail"]);
                    break;
                case "bye":
                    return 0;
            }
        }
        return 0;
    }

    /// <summary>A small JSON reader (objects, arrays, strings, numbers, true/false/null) and a string quoter.</summary>
    sealed class Json
    {
        readonly string s;
        int i;

        public Json(string text) { s = text; }

        public static string Quote(string text)
        {
            var b = new StringBuilder("\"");
            foreach (char c in text)
            {
                if (c == '"' || c == '\\') b.Append('\\').Append(c);
                else if (c < 0x20) b.Append("\\u").Append(((int)c).ToString("x4"));
                else b.Append(c);
            }
            return b.Append('"').ToString();
        }

        void Ws() { while (i < s.Length && char.IsWhiteSpace(s[i])) i++; }

        public object Value()
        {
            Ws();
            char c = s[i];
            if (c == '{')
            {
                var m = new Dictionary<string, object>();
                i++; Ws();
                if (s[i] == '}') { i++; return m; }
                while (true)
                {
                    Ws(); string k = Str(); Ws(); i++; // ':'
                    m[k] = Value(); Ws();
                    if (s[i++] == '}') return m;
                }
            }
            if (c == '[')
            {
                var a = new List<object>();
                i++; Ws();
                if (s[i] == ']') { i++; return a; }
                while (true)
                {
                    a.Add(Value()); Ws();
                    if (s[i++] == ']') return a;
                }
            }
            if (c == '"') return Str();
            if (string.CompareOrdinal(s, i, "true", 0, 4) == 0) { i += 4; return true; }
            if (string.CompareOrdinal(s, i, "false", 0, 5) == 0) { i += 5; return false; }
            if (string.CompareOrdinal(s, i, "null", 0, 4) == 0) { i += 4; return null; }
            int start = i;
            while (i < s.Length && "+-0123456789.eE".IndexOf(s[i]) >= 0) i++;
            if (i == start) throw new FormatException("unexpected " + c + " at " + start);
            return double.Parse(s.Substring(start, i - start), CultureInfo.InvariantCulture);
        }

        string Str()
        {
            var b = new StringBuilder();
            i++; // '"'
            while (true)
            {
                char c = s[i++];
                if (c == '"') return b.ToString();
                if (c != '\\') { b.Append(c); continue; }
                char e = s[i++];
                switch (e)
                {
                    case 'n': b.Append('\n'); break;
                    case 't': b.Append('\t'); break;
                    case 'r': b.Append('\r'); break;
                    case 'b': b.Append('\b'); break;
                    case 'f': b.Append('\f'); break;
                    case 'u': b.Append((char)int.Parse(s.Substring(i, 4), NumberStyles.HexNumber)); i += 4; break;
                    default: b.Append(e); break;
                }
            }
        }
    }
}
