import type { ServiceProcess } from '@outbox/testkit';
import { onTestFailed } from 'vitest';

/** On failure, prints what the consumer said (warnings and worse, kafkajs' included). */
export function reportOnFailure(consumer: ServiceProcess, last = 60): void {
  onTestFailed(() => {
    const said = consumer.lines
      .filter((l) => (l.level ?? 0) >= 40)
      .map((l) => {
        const err = (l.err ?? l.error) as { message?: unknown } | undefined;
        return `${String(l.time)} ${String(l.msg)} ${String(err?.message ?? '')}`;
      });
    process.stderr.write(`consumer warnings and errors:\n${said.slice(-last).join('\n')}\n`);
  });
}
