"""Key → screen and server change → screen of the real console binary in a pty, against a
served set: time from the key (or the DELETE request) to the end of the first frame after it
(the last byte before 15 ms without output). 20 of each; prints the medians.

    ststui sim --serve 127.0.0.1:PORT --write-kubeconfig KC --headless -f SET.yaml &
    python3 benches/tools/console-latency.py target/release/ststui KC N http://127.0.0.1:PORT

Needs `pyte` (pip install pyte), a terminal parser."""
import os, pty, sys, time, select, fcntl, termios, struct, urllib.request, statistics
import pyte
BIN, KC, N, SERVER = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
screen = pyte.Screen(200, 50); stream = pyte.ByteStream(screen)
pid, fd = pty.fork()
if pid == 0:
    os.environ['TERM'] = 'xterm-256color'
    os.execv(BIN, [BIN, '--kubeconfig', KC, 'web', '--log-file', os.environ.get('LOG', '/dev/null')])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 50, 200, 0, 0))
def read_once(timeout):
    r, _, _ = select.select([fd], [], [], timeout)
    if not r: return None
    data = os.read(fd, 1 << 20)
    if b'\x1b[6n' in data: os.write(fd, b'\x1b[1;1R')
    stream.feed(data)
    return time.monotonic()
def frame_end(timeout=2.0, gap=0.015):
    t = read_once(timeout)
    if t is None: return None
    while True:
        t2 = read_once(gap)
        if t2 is None: return t
        t = t2
def drain(secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        read_once(max(0.0, end - time.monotonic()))
def text(): return '\n'.join(screen.display)
t0 = time.monotonic()
while f'ready {N} ' not in text() and time.monotonic() - t0 < 60:
    read_once(0.5)
print('first view showing ready %d: %.3f s' % (N, time.monotonic() - t0))
drain(3.0)
keys, changes = [], []
for i in range(20):
    start = time.monotonic(); os.write(fd, b'\x1b[B' if i % 2 == 0 else b'\x1b[A')
    end = frame_end()
    if end: keys.append((end - start) * 1000)
    drain(0.3)
for i in range(20):
    name = 'web-%d' % (N // 2 + 3 * i)
    req = urllib.request.Request(f'{SERVER}/api/v1/namespaces/default/pods/{name}', method='DELETE')
    start = time.monotonic(); urllib.request.urlopen(req).read()
    end = frame_end()
    if end: changes.append((end - start) * 1000)
    drain(0.5)
os.write(fd, b'q')
try:
    while read_once(1.0): pass
except OSError: pass
fmt = lambda xs: 'median %.1f ms (min %.1f, max %.1f, n=%d)' % (statistics.median(xs), min(xs), max(xs), len(xs))
print('key → screen:', fmt(keys)); print('server change → screen:', fmt(changes))
