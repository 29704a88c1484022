// Preloaded into the peer gateway by the bench (`node --import bench/peer/loopback.mjs …`): it has
// no option for its listening address and would listen on every interface. This makes a listen()
// without a host listen on 127.0.0.1 only. It runs once, at start, and is not on the request path.
import net from 'node:net';

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const [first] = args;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof args[1] !== 'string') {
      if (args.length >= 2 && args[1] === undefined) args[1] = LOOPBACK;
      else args.splice(1, 0, LOOPBACK);
    }
  } else if (first && typeof first === 'object' && !('path' in first) && !('fd' in first) && !('_handle' in first) && !('handle' in first) && first.host === undefined) {
    args[0] = { ...first, host: LOOPBACK };
  }
  return listen.apply(this, args);
};
