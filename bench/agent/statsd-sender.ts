/**
 * A forked child of the StatsD benchmark, so the sender does not share the bench's event loop:
 * sends counter packets `<prefix><i>:1|c` (one metric per datagram, `names` distinct names round
 * robin) to 127.0.0.1:<port> at `rate` packets/s for `seconds`, paced every millisecond, over a
 * connected UDP socket. Tells the parent {ready} when it starts sending, then reports
 * {sent, errors, seconds, cpuSeconds} of the sending and exits.
 *
 * argv: port rate seconds names prefix
 */
import dgram from 'node:dgram';

const [port, rate, seconds, names] = process.argv.slice(2, 6).map(Number) as [number, number, number, number];
const prefix = process.argv[6] ?? 'bench.c';
const packets = Array.from({ length: names }, (_, i) => Buffer.from(`${prefix}${i}:1|c`));
const socket = dgram.createSocket('udp4');
// Large send buffer: a burst of sends must not fail with ENOBUFS/EAGAIN in the sender itself.
socket.connect(port, '127.0.0.1', () => {
  try {
    socket.setSendBufferSize(8 * 1024 * 1024);
  } catch {
    /* capped by wmem_max */
  }
  let sent = 0,
    errors = 0,
    i = 0;
  const onSent = (err: Error | null) => {
    if (err) errors++;
  };
  process.send!({ ready: true });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const durMs = seconds * 1000;
  const tick = () => {
    const elapsed = performance.now() - t0;
    const due = Math.min(Math.floor((elapsed / 1000) * rate), Math.floor(seconds * rate));
    // At most ~20 ms worth in one go, so a stall does not turn into one huge burst.
    const limit = Math.min(due, sent + Math.ceil(rate / 50));
    while (sent < limit) {
      socket.send(packets[i]!, onSent);
      if (++i === names) i = 0;
      sent++;
    }
    // Nothing due: sleep a millisecond rather than spin (the agent shares the machine's cores).
    if (elapsed < durMs) {
      if (sent >= due) setTimeout(tick, 1);
      else setImmediate(tick);
      return;
    }
    const sendSeconds = (performance.now() - t0) / 1000;
    const used = process.cpuUsage(cpu0);
    // A moment for the last send callbacks (errors) before reporting.
    setTimeout(() => {
      process.send!({ sent, errors, seconds: sendSeconds, cpuSeconds: (used.user + used.system) / 1e6 });
      socket.close();
      process.disconnect();
    }, 200);
  };
  tick();
});
