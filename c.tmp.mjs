import { createClient } from 'redis';

const c = createClient({ url: 'redis://127.0.0.1:1' });
c.on('error', (e) => console.log('error event', e.message));
const t = Date.now();
try {
  await c.connect();
  console.log('connected');
} catch (e) {
  console.log('rejected', e.message, Date.now() - t);
}
setTimeout(() => {
  console.log('still waiting', c.isOpen, c.isReady);
  process.exit(0);
}, 1500);
