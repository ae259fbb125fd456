import threading, sys
def work(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x
def run():
    for _ in range(5):
        work(400000)
ts=[threading.Thread(target=run) for _ in range(2)]
[t.start() for t in ts]; run(); [t.join() for t in ts]
