// Preloaded with NODE_OPTIONS="--import <this file>": every TCP listen starts
// 500 ms late, so an instance's HTTP side is bound well after its socket
// answers. Unix-socket listens are untouched.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first] = args;
  const tcp =
    typeof first === "number" || (typeof first === "object" && first !== null && "port" in first);
  if (!tcp) return listen.apply(this, args);
  setTimeout(() => listen.apply(this, args), 500);
  return this;
};
