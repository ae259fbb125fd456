/* tests/test-cli-common.c - tools/cli/cli.c: parsing, globs, JSON text. */
#include <config.h>

#include <string.h>

#include "cli.h"
#include "tap.h"

static void dur(const char *s, int rc, uint64_t want)
{
    uint64_t ns = 12345;
    int got = cli_parse_duration(s, &ns);
    if (rc == 0)
        tap_ok(got == 0 && ns == want, "duration '%s' = %llu (got %d, %llu)", s,
               (unsigned long long)want, got, (unsigned long long)ns);
    else
        tap_ok(got < 0, "duration '%s' rejected", s);
}

static void tim(const char *s, int rc, bool rel, uint64_t want)
{
    cli_time t = { 0 };
    int got = cli_parse_time(s, &t);
    if (rc == 0)
        tap_ok(got == 0 && t.relative == rel && t.ns == want,
               "time '%s' = %s%llu (got %d, %s%llu)", s, rel ? "+" : "",
               (unsigned long long)want, got, t.relative ? "+" : "",
               (unsigned long long)t.ns);
    else
        tap_ok(got < 0, "time '%s' rejected", s);
}

static void glob(const char *p, const char *s, bool want)
{
    tap_ok(cli_glob_match(p, s, strlen(s)) == want, "glob '%s' %s '%s'", p,
           want ? "matches" : "does not match", s);
}

static void quote(const char *s, size_t n, const char *want)
{
    char *q = cli_json_quote(s, n);
    tap_ok(strcmp(q, want) == 0, "json quote -> %s (got %s)", want, q);
    free(q);
}

int main(void)
{
    dur("10ms", 0, 10000000);
    dur("500us", 0, 500000);
    dur("1s", 0, 1000000000);
    dur("2m", 0, 120000000000ull);
    dur("1.5s", 0, 1500000000);
    dur("0.25ms", 0, 250000);
    dur("7ns", 0, 7);
    dur("1h", 0, 3600000000000ull);
    dur("0", 0, 0);
    dur("10", -1, 0);
    dur("", -1, 0);
    dur("ms", -1, 0);
    dur("1.s", -1, 0);
    /* The grammar rec-start reads --throttle and --flush-interval with. */
    dur("10 ms", 0, 10000000);
    dur("0.1s", 0, 100000000);
    dur("2min", 0, 120000000000ull);
    dur("3\xc2\xb5s", 0, 3000);
    dur("1.0000000019s", 0, 1000000001);
    dur("10 m s", -1, 0);
    dur("-1s", -1, 0);
    dur("99999999999999999999s", -1, 0);
    dur("18446744073709551615h", -1, 0);

    tim("1795288800000000000", 0, false, 1795288800000000000ull);
    tim("2026-11-21T19:20:00Z", 0, false, 1795288800000000000ull);
    tim("2026-11-21T19:20:00.5Z", 0, false, 1795288800500000000ull);
    tim("2026-11-21T20:20:00.000000001+01:00", 0, false, 1795288800000000001ull);
    tim("2026-11-21 19:20:00z", 0, false, 1795288800000000000ull);
    tim("1970-01-01T00:00:00Z", 0, false, 0);
    tim("2000-02-29T12:00:00Z", 0, false, 951825600000000000ull);
    tim("+1.5s", 0, true, 1500000000);
    tim("+0", 0, true, 0);
    tim("2026-11-21T19:20:00", -1, false, 0);
    tim("2026-13-21T19:20:00Z", -1, false, 0);
    tim("2026-11-21T19:20Z", -1, false, 0);
    tim("+", -1, false, 0);
    tim("yesterday", -1, false, 0);
    /* Durations back from the end of the data. */
    {
        static const struct { const char *s; uint64_t ns; } be[] = {
            { "5m", 300000000000ull }, { "-90s", 90000000000ull },
            { "1h", 3600000000000ull }, { "-1.5s", 1500000000 },
            { "-0", 0 },
        };
        for (size_t i = 0; i < sizeof be / sizeof be[0]; i++) {
            cli_time t = { 0 };
            int got = cli_parse_time(be[i].s, &t);
            tap_ok(got == 0 && t.before_end && !t.relative && t.ns == be[i].ns,
                   "time '%s' = %llu ns before the end (got %d, %d, %llu)",
                   be[i].s, (unsigned long long)be[i].ns, got, t.before_end,
                   (unsigned long long)t.ns);
        }
        tim("-", -1, false, 0);
        tim("-5", -1, false, 0);
        tim("5x", -1, false, 0);
        cli_time t = { 0 };
        tap_ok(cli_parse_time("0", &t) == 0 && !t.before_end && t.ns == 0,
               "time '0' is the epoch, not a duration");
    }

    cli_time t = { true, 500 };
    tap_ok(cli_time_resolve(&t, 1000) == 1500, "relative time resolves");
    t.ns = UINT64_MAX;
    tap_ok(cli_time_resolve(&t, 1000) == UINT64_MAX, "relative time saturates");

    char buf[48];
    cli_format_time(1795288800000000000ull, buf, sizeof buf);
    tap_ok(strcmp(buf, "2026-11-21T19:20:00Z") == 0, "format time %s", buf);
    cli_format_time(1795288800123000000ull, buf, sizeof buf);
    tap_ok(strcmp(buf, "2026-11-21T19:20:00.123Z") == 0, "format time %s", buf);
    cli_format_time(951825600000000007ull, buf, sizeof buf);
    tap_ok(strcmp(buf, "2000-02-29T12:00:00.000000007Z") == 0, "format time %s", buf);
    cli_format_duration(1500000000, buf, sizeof buf);
    tap_ok(strcmp(buf, "1.500 s") == 0, "format duration %s", buf);
    cli_format_duration(950, buf, sizeof buf);
    tap_ok(strcmp(buf, "950 ns") == 0, "format duration %s", buf);

    glob("CPUTimeSample*", "CPUTimeSampleLost", true);
    glob("CPUTimeSample", "CPUTimeSampleLost", false);
    glob("*Lost", "CPUTimeSampleLost", true);
    glob("Thread?nd", "ThreadEnd", true);
    glob("worker-[0-9]", "worker-7", true);
    glob("worker-[!0-9]", "worker-7", false);
    glob("a*b*c", "aXXbYYbZZc", true);
    glob("a*b*c", "aXXbYYbZZ", false);
    glob("*", "", true);
    glob("", "", true);
    glob("", "x", false);
    glob("\\*", "*", true);
    glob("\\*", "x", false);
    glob("[", "[", true);
    glob("**x**", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaay", false);

    cli_patterns *p;
    tap_ok(cli_patterns_parse("Thread*,CPUInfo", &p) == 0, "pattern list parses");
    tap_ok(cli_patterns_match(p, "ThreadEnd", 9) && cli_patterns_match(p, "CPUInfo", 7) &&
           !cli_patterns_match(p, "CPUTimeSample", 13), "pattern list matches");
    cli_patterns_free(p);
    tap_ok(cli_patterns_parse(",", &p) < 0, "empty pattern list rejected");

    cli_threads *th;
    tap_ok(cli_threads_parse("42,worker-*", &th) == 0, "thread list parses");
    tap_ok(cli_threads_match(th, 42, NULL, 0), "thread by tid");
    tap_ok(cli_threads_match(th, 7, "worker-3", 8), "thread by name glob");
    tap_ok(!cli_threads_match(th, 7, "main", 4), "other thread excluded");
    tap_ok(!cli_threads_match(th, 7, NULL, 0), "unnamed thread excluded");
    cli_threads_free(th);

    quote("a\"b\\c\n", 6, "\"a\\\"b\\\\c\\n\"");
    quote("\x01", 1, "\"\\u0001\"");
    quote("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");
    quote("bad\xff" "x", 5, "\"bad\xef\xbf\xbdx\"");
    quote("nul\0x", 5, "\"nul\\u0000x\"");
    quote("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");

    cli_buf b = { 0 };
    cli_buf_add_u64(&b, 0);
    cli_buf_addc(&b, ' ');
    cli_buf_add_u64(&b, UINT64_MAX);
    cli_buf_addc(&b, ' ');
    cli_buf_add_i64(&b, INT64_MIN);
    cli_buf_addc(&b, '\0');
    tap_ok(strcmp(b.p, "0 18446744073709551615 -9223372036854775808") == 0,
           "integers: %s", b.p);
    cli_buf_free(&b);

    cli_map m = { 0 };
    int keys[1000];
    for (int i = 0; i < 1000; i++)
        cli_map_xput(&m, (uintptr_t)&keys[i], (uint32_t)i);
    cli_map_xput(&m, (uintptr_t)&keys[7], 70000);     /* replaces */
    int bad = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t v;
        bad += !cli_map_get(&m, (uintptr_t)&keys[i], &v) ||
               v != (i == 7 ? 70000u : (uint32_t)i);
    }
    tap_ok(bad == 0 && m.n == 1000, "map holds 1000 keys, a put replaces");
    cli_map_clear(&m);
    uint32_t v;
    tap_ok(!cli_map_get(&m, (uintptr_t)&keys[3], &v) && m.n == 0,
           "map cleared");
    cli_map_free(&m);

    cli_strtab st = { 0 };
    long a = cli_strtab_intern(&st, "main", 4);
    long b2 = cli_strtab_intern(&st, "mainly", 4);   /* the first 4 bytes */
    long c = cli_strtab_intern(&st, "free", 4);
    bad = 0;
    for (int i = 0; i < 5000; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%d", i);
        bad += cli_strtab_intern(&st, name, strlen(name)) != i + 2;
    }
    tap_ok(a == 0 && b2 == 0 && c == 1 && bad == 0 && st.n == 5002 &&
           strcmp(st.strs[4001], "f3999") == 0,
           "strtab: equal strings share an index, 5002 distinct");
    cli_strtab_free(&st);
    return tap_done();
}
