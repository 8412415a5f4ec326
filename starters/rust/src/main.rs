// A starter bot in Rust (std only, no crates: builds offline): random legal moves, every variant.
// The referee writes one JSON object per line to stdin; answer `hello` with a hello and every
// `turn` with one line echoing its `id`; nothing else needs an answer. Exit on `bye` or at end of
// input. Debug output goes to stderr only (eprintln!).
use std::collections::HashMap;
use std::io::{self, BufRead, Write};

#[derive(Debug)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(HashMap<String, Json>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.get(key),
            _ => None,
        }
    }
    fn str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
    fn num(&self) -> Option<f64> {
        match self {
            Json::Num(n) => Some(*n),
            _ => None,
        }
    }
    fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(a) => a,
            _ => &[],
        }
    }
}

/// A small JSON reader: one value from `s` starting at `*i`.
fn parse(s: &[u8], i: &mut usize) -> Result<Json, String> {
    let ws = |i: &mut usize| {
        while *i < s.len() && (s[*i] as char).is_ascii_whitespace() {
            *i += 1
        }
    };
    ws(i);
    let c = *s.get(*i).ok_or("unexpected end")?;
    match c {
        b'{' => {
            *i += 1;
            let mut m = HashMap::new();
            ws(i);
            if s.get(*i) == Some(&b'}') {
                *i += 1;
                return Ok(Json::Obj(m));
            }
            loop {
                ws(i);
                let k = match parse(s, i)? {
                    Json::Str(k) => k,
                    _ => return Err("a key must be a string".into()),
                };
                ws(i);
                *i += 1; // ':'
                let v = parse(s, i)?;
                m.insert(k, v);
                ws(i);
                let end = *s.get(*i).ok_or("unexpected end")?;
                *i += 1;
                if end == b'}' {
                    return Ok(Json::Obj(m));
                }
            }
        }
        b'[' => {
            *i += 1;
            let mut a = Vec::new();
            ws(i);
            if s.get(*i) == Some(&b']') {
                *i += 1;
                return Ok(Json::Arr(a));
            }
            loop {
                a.push(parse(s, i)?);
                ws(i);
                let end = *s.get(*i).ok_or("unexpected end")?;
                *i += 1;
                if end == b']' {
                    return Ok(Json::Arr(a));
                }
            }
        }
        b'"' => {
            *i += 1;
            let mut out: Vec<u8> = Vec::new();
            loop {
                let c = *s.get(*i).ok_or("unterminated string")?;
                *i += 1;
                match c {
                    b'"' => return String::from_utf8(out).map(Json::Str).map_err(|e| e.to_string()),
                    b'\\' => {
                        let e = *s.get(*i).ok_or("unterminated string")?;
                        *i += 1;
                        let ch = match e {
                            b'n' => '\n',
                            b't' => '\t',
                            b'r' => '\r',
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'u' => {
                                let hex = std::str::from_utf8(&s[*i..*i + 4]).map_err(|e| e.to_string())?;
                                *i += 4;
                                char::from_u32(u32::from_str_radix(hex, 16).map_err(|e| e.to_string())?).unwrap_or('?')
                            }
                            other => other as char,
                        };
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                    other => out.push(other),
                }
            }
        }
        b't' => {
            *i += 4;
            Ok(Json::Bool(true))
        }
        b'f' => {
            *i += 5;
            Ok(Json::Bool(false))
        }
        b'n' => {
            *i += 4;
            Ok(Json::Null)
        }
        _ => {
            let start = *i;
            while *i < s.len() && b"+-0123456789.eE".contains(&s[*i]) {
                *i += 1
            }
            let text = std::str::from_utf8(&s[start..*i]).map_err(|e| e.to_string())?;
            text.parse::<f64>().map(Json::Num).map_err(|_| format!("unexpected {:?} at {}", c as char, start))
        }
    }
}

fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// xorshift64*: random enough for a starter, and no crate needed.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545F4914F6CDD1D) % n as u64) as usize
    }
}

fn main() {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let mut rng = Rng(seed | 1);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let (mut ask_mode, mut please) = (String::from("card"), false);
    for line in io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let msg = match parse(line.as_bytes(), &mut 0) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("not JSON: {}", e);
                continue;
            }
        };
        let reply = match msg.get("type").and_then(Json::str) {
            Some("hello") => r#"{"type":"hello","protocol":1,"name":"RustStarter","version":"1"}"#.to_string(),
            Some("start") => {
                if let Some(rules) = msg.get("rules") {
                    ask_mode = rules.get("ask").and_then(Json::str).unwrap_or("card").to_string();
                    please = matches!(rules.get("please"), Some(Json::Bool(true)));
                }
                continue;
            }
            Some("turn") => {
                // replace these random choices with your strategy
                let id = msg.get("id").and_then(Json::num).unwrap_or(0.0) as i64;
                let decide = msg.get("decide").and_then(Json::str).unwrap_or("ask").to_string();
                let options = msg.get("options").map(Json::arr).unwrap_or(&[]);
                let choice = quote(options[rng.below(options.len())].str().unwrap_or(""));
                if decide != "ask" {
                    format!(r#"{{"type":"{}","id":{},"card":{}}}"#, decide, id, choice)
                } else {
                    let targets = msg.get("targets").map(Json::arr).unwrap_or(&[]);
                    let target = targets[rng.below(targets.len())].num().unwrap_or(0.0) as i64;
                    let field = if ask_mode == "family" { "family" } else { "card" };
                    let polite = if please { r#","please":true"# } else { "" };
                    format!(r#"{{"type":"ask","id":{},"target":{},"{}":{}{}}}"#, id, target, field, choice, polite)
                }
            }
            Some("error") => {
                eprintln!("referee error: {:?} {:?}", msg.get("fault"), msg.get("detail"));
                continue;
            }
            Some("bye") => return,
            _ => continue, // event, end and anything new: nothing to answer
        };
        // one line per message, flushed at once (stdout is line-buffered only on a terminal)
        if writeln!(out, "{}", reply).and_then(|_| out.flush()).is_err() {
            return;
        }
    }
}
