// Reference: a bare Fastify hello-world, the ceiling the real routes are compared with.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ host: '127.0.0.1', port: Number(process.argv[2]) });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
