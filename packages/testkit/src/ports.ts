import { isPortFree } from '@outbox/dev-stack';

/** The five ports of a test's system (the keys of the demo's SystemPorts). */
export interface TestSystemPorts {
  dashboard: number;
  orderApi: number;
  worker1: number;
  worker2: number;
  consumer: number;
}

// Below the kernel's ephemeral range (32768–60999 here, /proc/sys/net/ipv4/ip_local_port_range):
// a port drawn inside it can be held by any client socket's local end (a pool's link to
// PostgreSQL, say), and the service meant for it could not listen there. A CI run failed
// that way once the demo began refusing ports in use.
const LOW = 20_000;
const HIGH = 32_000;

/**
 * Five consecutive ports from a random base below the ephemeral range, each free now
 * (checked; another base is drawn otherwise): what a test's startSystem listens on.
 */
export async function freeSystemPorts(): Promise<TestSystemPorts> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const base = LOW + Math.floor(Math.random() * ((HIGH - LOW) / 10)) * 10;
    const ports = [base, base + 1, base + 2, base + 3, base + 4];
    const free = await Promise.all(ports.map((p) => isPortFree(p)));
    if (free.every(Boolean))
      return {
        dashboard: base,
        orderApi: base + 1,
        worker1: base + 2,
        worker2: base + 3,
        consumer: base + 4,
      };
  }
  throw new Error(`no five free consecutive ports found between ${LOW} and ${HIGH}`);
}
