export {
  IDLE_GRACE_MS,
  closeGracefully,
  isDraining,
  trackConnections,
  type ClosableServer,
} from './listen-drain.js';
