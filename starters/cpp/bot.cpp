// A starter bot in C++ (C++17, standard library only): random legal moves, every variant.
// The referee writes one JSON object per line to stdin; answer `hello` with a hello and every
// `turn` with one line echoing its `id` (and flush); nothing else needs an answer. Exit on `bye`
// or at end of input. Debug output goes to stderr only (std::cerr).
#include <iostream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// A small JSON reader: an object's members as raw text, then each value read as what it should be.
struct Reader {
    const std::string& s;
    size_t i = 0;

    void ws() {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
    }
    char peek() {
        ws();
        if (i >= s.size()) throw std::runtime_error("unexpected end");
        return s[i];
    }
    std::string string() {
        if (peek() != '"') throw std::runtime_error("expected a string");
        std::string out;
        for (++i; i < s.size(); ++i) {
            char c = s[i];
            if (c == '"') { ++i; return out; }
            if (c != '\\') { out += c; continue; }
            char e = s.at(++i);
            if (e == 'n') out += '\n';
            else if (e == 't') out += '\t';
            else if (e == 'r') out += '\r';
            else if (e == 'b') out += '\b';
            else if (e == 'f') out += '\f';
            else if (e == 'u') {
                unsigned cp = std::stoul(s.substr(i + 1, 4), nullptr, 16);
                i += 4;
                if (cp < 0x80) out += char(cp);
                else if (cp < 0x800) { out += char(0xC0 | cp >> 6); out += char(0x80 | (cp & 0x3F)); }
                else { out += char(0xE0 | cp >> 12); out += char(0x80 | (cp >> 6 & 0x3F)); out += char(0x80 | (cp & 0x3F)); }
            } else out += e;
        }
        throw std::runtime_error("unterminated string");
    }
    void skip() {  // any value
        char c = peek();
        if (c == '"') { string(); return; }
        if (c == '{' || c == '[') {
            char close = c == '{' ? '}' : ']';
            ++i;
            if (peek() == close) { ++i; return; }
            while (true) {
                if (close == '}') { string(); peek(); ++i; }  // key and ':'
                skip();
                char sep = peek();
                ++i;
                if (sep == close) return;
            }
        }
        while (i < s.size() && std::string(",}] \t\r\n").find(s[i]) == std::string::npos) ++i;
    }
    std::map<std::string, std::string> object() {  // member -> its raw JSON text
        std::map<std::string, std::string> m;
        if (peek() != '{') throw std::runtime_error("expected an object");
        ++i;
        if (peek() == '}') { ++i; return m; }
        while (true) {
            std::string key = string();
            peek();
            ++i;  // ':'
            size_t start = (ws(), i);
            skip();
            m[key] = s.substr(start, i - start);
            char sep = peek();
            ++i;
            if (sep == '}') return m;
        }
    }
    std::vector<std::string> array() {  // elements as raw JSON text
        std::vector<std::string> a;
        if (peek() != '[') throw std::runtime_error("expected an array");
        ++i;
        if (peek() == ']') { ++i; return a; }
        while (true) {
            size_t start = (ws(), i);
            skip();
            a.push_back(s.substr(start, i - start));
            char sep = peek();
            ++i;
            if (sep == ']') return a;
        }
    }
};

std::string text(const std::string& raw) { Reader r{raw}; return r.string(); }
std::map<std::string, std::string> object(const std::string& raw) { Reader r{raw}; return r.object(); }
std::vector<std::string> array(const std::string& raw) { Reader r{raw}; return r.array(); }

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') { out += '\\'; out += c; }
        else if (static_cast<unsigned char>(c) < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
        else out += c;
    }
    return out + "\"";
}

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    std::mt19937 rng(std::random_device{}());
    auto below = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
    std::string ask_mode = "card";
    bool please = false;
    std::string line;
    while (std::getline(std::cin, line)) {
        try {
            auto msg = object(line);
            std::string type = msg.count("type") ? text(msg["type"]) : "";
            if (type == "hello") {
                std::cout << R"({"type":"hello","protocol":1,"name":"CppStarter","version":"1"})" << std::endl;
            } else if (type == "start" && msg.count("rules")) {
                auto rules = object(msg["rules"]);
                ask_mode = rules.count("ask") ? text(rules["ask"]) : "card";
                please = rules.count("please") && rules["please"] == "true";
            } else if (type == "turn") {
                // replace these random choices with your strategy
                std::string id = msg["id"], decide = text(msg["decide"]);
                auto options = array(msg["options"]);
                std::string choice = quote(text(options.at(below(options.size()))));
                if (decide != "ask") {
                    std::cout << R"({"type":")" << decide << R"(","id":)" << id << R"(,"card":)" << choice << "}" << std::endl;
                    continue;
                }
                auto targets = array(msg["targets"]);
                std::cout << R"({"type":"ask","id":)" << id << R"(,"target":)" << targets.at(below(targets.size()))
                          << ",\"" << (ask_mode == "family" ? "family" : "card") << "\":" << choice
                          << (please ? R"(,"please":true)" : "") << "}" << std::endl;  // endl flushes
            } else if (type == "error") {
                std::cerr << "referee error: " << line << "\n";
            } else if (type == "bye") {
                return 0;
            }
        } catch (const std::exception& e) {
            std::cerr << "cannot read a line (" << e.what() << "): " << line.substr(0, 200) << "\n";
        }
    }
    return 0;
}
