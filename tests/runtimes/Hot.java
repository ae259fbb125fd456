// A JIT-compiled hot loop for tests/test-runtimes.sh: inner() and outer()
// are compiled by HotSpot's C2 within the first second. Prints "ok".
public class Hot {
    static double inner(int n) {
        double s = 0;
        for (int i = 0; i < n; i++)
            s += Math.sqrt(i) % 7;
        return s;
    }

    static double outer(int k) {
        double t = 0;
        for (int j = 0; j < k; j++)
            t += inner(100000 + j % 3);
        return t;
    }

    public static void main(String[] args) {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 2000;
        long t0 = System.currentTimeMillis();
        double r = 0;
        while (System.currentTimeMillis() - t0 < ms)
            r += outer(10);
        System.out.println(r > 0 ? "ok" : "bad");
    }
}
