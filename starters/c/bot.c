/* A starter bot in C (C99, one file, no libraries, its own small JSON reader): random legal moves,
 * every variant. (The same bot as sample_bots/c_bot.c: copy this folder to start your own.)
 *
 * Build:  cc -O2 -o bot bot.c         (league config: build = "cc -O2 -o bot bot.c", runtime = "c")
 * Check:  referee check-bot --runtime c -- starters/c/bot
 *
 * The protocol in one breath: the referee writes one JSON object per line to
 * our stdin; we answer `hello` with our hello and every `turn` with one reply
 * line that echoes the turn's `id` (and flush!). start/event/end/error need no
 * answer. We stop on `bye` or end of input. Debug output goes to stderr only.
 *
 * It plays every variant, custom ask variants included: families, members, ask
 * mode and politeness come from `start.rules`; the legal choices (`options`,
 * `targets`) from each `turn` (worked out from hand and counts if absent).
 * The JSON reader accepts any valid JSON (whitespace, escapes, nesting) and
 * skips a line it cannot parse, with a note on stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------- a tiny JSON reader ---------------- */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct JNode {
    int type;
    double num;          /* J_NUM, J_BOOL (0/1) */
    char *str;           /* J_STR: decoded UTF-8; object member: key */
    char *key;           /* set when the node is a member of an object */
    struct JNode *child; /* J_ARR / J_OBJ: first element */
    struct JNode *next;  /* next sibling */
} JNode;

typedef struct { const char *p; int depth; int ok; } Parser;

static JNode *jnew(int type) {
    JNode *n = calloc(1, sizeof *n);
    if (!n) { fputs("c_bot: out of memory\n", stderr); exit(1); }
    n->type = type;
    return n;
}

static void jfree(JNode *n) {
    while (n) {
        JNode *next = n->next;
        jfree(n->child);
        free(n->str);
        free(n->key);
        free(n);
        n = next;
    }
}

static void skip_ws(Parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r' || *ps->p == '\n') ps->p++;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static char *parse_string(Parser *ps) {
    /* ps->p points at the opening quote */
    size_t cap = 16, len = 0;
    char *out = malloc(cap);
    if (!out) exit(1);
    ps->p++;
    for (;;) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == 0 || c < 0x20) { ps->ok = 0; free(out); return NULL; }
        if (len + 8 > cap) { cap *= 2; out = realloc(out, cap); if (!out) exit(1); }
        ps->p++;
        if (c == '"') break;
        if (c != '\\') { out[len++] = (char)c; continue; }
        c = (unsigned char)*ps->p++;
        switch (c) {
        case '"': out[len++] = '"'; break;
        case '\\': out[len++] = '\\'; break;
        case '/': out[len++] = '/'; break;
        case 'b': out[len++] = '\b'; break;
        case 'f': out[len++] = '\f'; break;
        case 'n': out[len++] = '\n'; break;
        case 'r': out[len++] = '\r'; break;
        case 't': out[len++] = '\t'; break;
        case 'u': {
            unsigned cp = 0;
            for (int i = 0; i < 4; i++) {
                int h = hexval(*ps->p);
                if (h < 0) { ps->ok = 0; free(out); return NULL; }
                cp = cp * 16 + (unsigned)h;
                ps->p++;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF && ps->p[0] == '\\' && ps->p[1] == 'u') {
                unsigned lo = 0;
                int good = 1;
                for (int i = 0; i < 4; i++) {
                    int h = hexval(ps->p[2 + i]);
                    if (h < 0) { good = 0; break; }
                    lo = lo * 16 + (unsigned)h;
                }
                if (good && lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    ps->p += 6;
                }
            }
            if (cp < 0x80) out[len++] = (char)cp;
            else if (cp < 0x800) { out[len++] = (char)(0xC0 | (cp >> 6)); out[len++] = (char)(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) {
                out[len++] = (char)(0xE0 | (cp >> 12)); out[len++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[len++] = (char)(0x80 | (cp & 0x3F));
            } else {
                out[len++] = (char)(0xF0 | (cp >> 18)); out[len++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                out[len++] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[len++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default: ps->ok = 0; free(out); return NULL;
        }
    }
    out[len] = 0;
    return out;
}

static JNode *parse_value(Parser *ps) {
    skip_ws(ps);
    if (!ps->ok) return NULL;
    if (++ps->depth > 64) { ps->ok = 0; return NULL; }
    JNode *n = NULL;
    char c = *ps->p;
    if (c == '{' || c == '[') {
        int is_obj = (c == '{');
        n = jnew(is_obj ? J_OBJ : J_ARR);
        JNode **tail = &n->child;
        ps->p++;
        skip_ws(ps);
        if (*ps->p == (is_obj ? '}' : ']')) { ps->p++; ps->depth--; return n; }
        for (;;) {
            char *key = NULL;
            skip_ws(ps);
            if (is_obj) {
                if (*ps->p != '"') { ps->ok = 0; break; }
                key = parse_string(ps);
                if (!key) break;
                skip_ws(ps);
                if (*ps->p != ':') { free(key); ps->ok = 0; break; }
                ps->p++;
            }
            JNode *v = parse_value(ps);
            if (!v) { free(key); ps->ok = 0; break; }
            v->key = key;
            *tail = v;
            tail = &v->next;
            skip_ws(ps);
            if (*ps->p == ',') { ps->p++; continue; }
            if (*ps->p == (is_obj ? '}' : ']')) { ps->p++; break; }
            ps->ok = 0;
            break;
        }
    } else if (c == '"') {
        n = jnew(J_STR);
        n->str = parse_string(ps);
    } else if (strncmp(ps->p, "true", 4) == 0) {
        n = jnew(J_BOOL); n->num = 1; ps->p += 4;
    } else if (strncmp(ps->p, "false", 5) == 0) {
        n = jnew(J_BOOL); ps->p += 5;
    } else if (strncmp(ps->p, "null", 4) == 0) {
        n = jnew(J_NULL); ps->p += 4;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        char *end;
        n = jnew(J_NUM);
        n->num = strtod(ps->p, &end);
        if (end == ps->p) ps->ok = 0;
        ps->p = end;
    } else {
        ps->ok = 0;
    }
    ps->depth--;
    if (!ps->ok) { jfree(n); return NULL; }
    return n;
}

static JNode *json_parse(const char *text) {
    Parser ps = { text, 0, 1 };
    JNode *root = parse_value(&ps);
    skip_ws(&ps);
    if (!ps.ok || *ps.p != 0) { jfree(root); return NULL; }
    return root;
}

static JNode *jget(JNode *obj, const char *key) {
    if (!obj || obj->type != J_OBJ) return NULL;
    for (JNode *c = obj->child; c; c = c->next)
        if (c->key && strcmp(c->key, key) == 0) return c;
    return NULL;
}

static const char *jstr(JNode *obj, const char *key) {
    JNode *n = jget(obj, key);
    return (n && n->type == J_STR) ? n->str : NULL;
}

static long jint(JNode *obj, const char *key, long dflt) {
    JNode *n = jget(obj, key);
    return (n && n->type == J_NUM) ? (long)n->num : dflt;
}

static int jlen(JNode *arr) {
    int k = 0;
    if (arr && arr->type == J_ARR)
        for (JNode *c = arr->child; c; c = c->next) k++;
    return k;
}

/* ---------------- writing replies ---------------- */

static void put_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { putchar('\\'); putchar(c); }
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

/* ---------------- the game ---------------- */

#define MAXN 256
static char *families[MAXN]; static int nfam = 0;
static char *members[MAXN];  static int nmem = 0;
static int family_mode = 0, polite = 0, my_seat = 0;

static void clear_rules(void) {
    for (int i = 0; i < nfam; i++) free(families[i]);
    for (int i = 0; i < nmem; i++) free(members[i]);
    nfam = nmem = 0;
}

static int load_names(JNode *arr, char **dst) {
    int k = 0;
    if (!arr || arr->type != J_ARR) return 0;
    for (JNode *c = arr->child; c && k < MAXN; c = c->next)
        if (c->type == J_STR) dst[k++] = strdup(c->str);
    return k;
}

/* index of the family of `card`, or -1 */
static int family_of(const char *card) {
    for (int f = 0; f < nfam; f++) {
        size_t fl = strlen(families[f]);
        if (strncmp(card, families[f], fl) != 0) continue;
        for (int m = 0; m < nmem; m++)
            if (strcmp(card + fl, members[m]) == 0) return f;
    }
    return -1;
}

static int in_hand(JNode *hand, const char *card) {
    if (!hand || hand->type != J_ARR) return 0;
    for (JNode *c = hand->child; c; c = c->next)
        if (c->type == J_STR && strcmp(c->str, card) == 0) return 1;
    return 0;
}

static void answer_ask(JNode *turn, long id) {
    JNode *hand = jget(turn, "hand"), *counts = jget(turn, "counts");
    JNode *targets = jget(turn, "targets"), *options = jget(turn, "options");
    long target = -1;
    /* target: from turn.targets, else any other seat that holds cards */
    if (jlen(targets) > 0) {
        int k = rand() % jlen(targets);
        JNode *c = targets->child;
        while (k--) c = c->next;
        target = (long)c->num;
    } else if (counts && counts->type == J_ARR) {
        long cand[MAXN]; int nc = 0, s = 0;
        for (JNode *c = counts->child; c && nc < MAXN; c = c->next, s++)
            if (s != my_seat && c->num > 0) cand[nc++] = s;
        if (nc > 0) target = cand[rand() % nc];
    }
    /* what to ask for: from turn.options, else from hand and rules */
    char buf[512];
    const char *wanted = NULL;
    if (jlen(options) > 0) {
        int k = rand() % jlen(options);
        JNode *c = options->child;
        while (k--) c = c->next;
        wanted = c->str;
    } else {
        int held[MAXN] = {0};
        for (JNode *c = hand ? hand->child : NULL; c; c = c->next)
            if (c->type == J_STR) { int f = family_of(c->str); if (f >= 0) held[f] = 1; }
        int seen = 0;  /* reservoir sampling over the legal options */
        for (int f = 0; f < nfam; f++) {
            if (!held[f]) continue;
            if (family_mode) {
                if (rand() % ++seen == 0) snprintf(buf, sizeof buf, "%s", families[f]);
                continue;
            }
            for (int m = 0; m < nmem; m++) {
                char card[512];
                snprintf(card, sizeof card, "%s%s", families[f], members[m]);
                if (!in_hand(hand, card) && rand() % ++seen == 0) snprintf(buf, sizeof buf, "%s", card);
            }
        }
        if (seen > 0) wanted = buf;
    }
    if (target < 0 || !wanted) {
        fprintf(stderr, "c_bot: no legal ask found in turn %ld\n", id);
        return;
    }
    printf("{\"type\":\"ask\",\"id\":%ld,\"target\":%ld,\"%s\":", id, target, family_mode ? "family" : "card");
    put_string(wanted);
    if (polite) printf(",\"please\":true");
    printf("}\n");
    fflush(stdout);
}

static void answer_chickens(JNode *turn, long id, const char *decide) {
    JNode *options = jget(turn, "options");
    if (jlen(options) == 0) options = jget(turn, strcmp(decide, "play") == 0 ? "hand" : "centre");
    int n = jlen(options);
    if (n == 0) { fprintf(stderr, "c_bot: nothing to %s in turn %ld\n", decide, id); return; }
    int k = rand() % n;
    JNode *c = options->child;
    while (k--) c = c->next;
    printf("{\"type\":\"%s\",\"id\":%ld,\"card\":", decide, id);
    put_string(c->type == J_STR ? c->str : "");
    printf("}\n");
    fflush(stdout);
}

/* returns 0 to stop */
static int handle(JNode *msg) {
    const char *type = jstr(msg, "type");
    if (!type) return 1;
    if (strcmp(type, "hello") == 0) {
        long proto = jint(msg, "protocol", -1);
        if (proto != 1) fprintf(stderr, "c_bot: referee speaks protocol %ld, this bot speaks 1\n", proto);
        printf("{\"type\":\"hello\",\"protocol\":1,\"name\":\"CBot\",\"version\":\"1.0\"}\n");
        fflush(stdout);
    } else if (strcmp(type, "start") == 0) {
        JNode *rules = jget(msg, "rules");
        clear_rules();
        nfam = load_names(jget(rules, "families"), families);
        nmem = load_names(jget(rules, "members"), members);
        const char *mode = jstr(rules, "ask");
        family_mode = mode && strcmp(mode, "family") == 0;
        JNode *please = jget(rules, "please");
        polite = please && please->type == J_BOOL && please->num != 0;
        my_seat = (int)jint(msg, "seat", 0);
    } else if (strcmp(type, "turn") == 0) {
        long id = jint(msg, "id", -1);
        const char *decide = jstr(msg, "decide");
        if (!decide) return 1;
        if (strcmp(decide, "ask") == 0) answer_ask(msg, id);
        else answer_chickens(msg, id, decide);
    } else if (strcmp(type, "error") == 0) {
        const char *fault = jstr(msg, "fault"), *detail = jstr(msg, "detail");
        fprintf(stderr, "c_bot: referee error (%s): %s\n", fault ? fault : "?", detail ? detail : "");
    } else if (strcmp(type, "bye") == 0) {
        return 0;
    }
    return 1;  /* event, end (any reason: complete, stalled, aborted) and unknown types need no answer */
}

int main(void) {
    srand((unsigned)time(NULL) ^ ((unsigned)getpid() << 16));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) != -1) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (len == 0) continue;
        JNode *msg = json_parse(line);
        if (!msg) { fprintf(stderr, "c_bot: ignoring a line that is not JSON: %.200s\n", line); continue; }
        int go_on = handle(msg);
        jfree(msg);
        if (!go_on) break;
    }
    free(line);
    clear_rules();
    return 0;
}
