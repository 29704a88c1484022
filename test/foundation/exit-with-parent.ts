/**
 * Preloaded (`--import`) into gateway processes that a test spawns with an IPC
 * channel: when the test process goes away, even killed, the channel closes
 * and the gateway shuts down as on SIGTERM instead of living on as an orphan
 * that holds a port and a data directory.
 */
process.on('disconnect', () => {
  process.kill(process.pid, 'SIGTERM');
});
