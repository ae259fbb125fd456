# A pure-Python workload for the Python-frame tests: a loop two calls
# deep (inner runs lines 8 to 10), a generator, and a second thread. Its
# output depends only on N, so a recorded run prints the same.
import sys
import threading

def inner(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s

def gen(n):
    for i in range(n):
        yield i & 3

def consume(n):
    return sum(gen(n))

class Worker:
    def hot_loop(self, rounds):
        total = 0
        for _ in range(rounds):
            total += inner(20000)
        return total

def other(rounds, out):
    out.append(sum(consume(20000) for _ in range(rounds)))

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 100
res = []
t = threading.Thread(target=other, args=(rounds // 2, res))
t.start()
total = Worker().hot_loop(rounds)
t.join()
print(total, res[0])
