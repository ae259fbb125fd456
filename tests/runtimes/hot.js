// A JIT-compiled hot loop for tests/test-runtimes.sh: inner() is compiled
// by V8's optimizing tier within the first second. Prints "ok".
function inner(n) {
    let s = 0;
    for (let i = 0; i < n; i++)
        s += Math.sqrt(i) % 7;
    return s;
}
function outer(k) {
    let t = 0;
    for (let j = 0; j < k; j++)
        t += inner(200000);
    return t;
}
const ms = Number(process.argv[2] || 1500);
const t0 = Date.now();
let r = 0;
while (Date.now() - t0 < ms)
    r += outer(10);
console.log(r > 0 ? "ok" : "bad");
