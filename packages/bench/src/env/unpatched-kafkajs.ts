import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type KafkaJs = typeof import('kafkajs');

const PATCH = fileURLToPath(new URL('../../../../patches/kafkajs@2.2.4.patch', import.meta.url));
/** A line only the patched sendMessages.js has (see the patch's first hunk). */
const PATCH_MARK = 'const acknowledged = new Map()';

export interface UnpatchedKafkaJs {
  kafkajs: KafkaJs;
  /** Removes the copy. */
  dispose(): void;
}

/**
 * kafkajs 2.2.4 as published, without patches/kafkajs@2.2.4.patch, to measure what
 * the patch costs beside the patched package in the same run. pnpm applies the patch
 * to every copy of kafkajs@2.2.4 it installs (an npm: alias included), so the
 * unpatched one is made here: the installed package copied to a temporary folder and
 * the patch reversed with patch(1). The copy is checked to be unpatched before use.
 */
export async function unpatchedKafkaJs(): Promise<UnpatchedKafkaJs> {
  const installed = dirname(createRequire(import.meta.url).resolve('kafkajs/package.json'));
  const dir = mkdtempSync(join(tmpdir(), 'bench-kafkajs-unpatched-'));
  const dispose = () => rmSync(dir, { recursive: true, force: true });
  try {
    cpSync(installed, dir, { recursive: true, dereference: true });
    const reversed = spawnSync('patch', ['-R', '-p1', '-d', dir, '-i', PATCH], {
      encoding: 'utf8',
    });
    if (reversed.error || reversed.status !== 0)
      throw new Error(
        `could not reverse ${PATCH} on a copy of kafkajs (is patch(1) installed? apt-get install -y patch): ${reversed.error?.message ?? reversed.stdout + reversed.stderr}`,
      );
    const sendMessages = join(dir, 'src/producer/sendMessages.js');
    if (!existsSync(sendMessages) || readFileSync(sendMessages, 'utf8').includes(PATCH_MARK))
      throw new Error(`the copy of kafkajs in ${dir} is still patched`);
    const loaded = (await import(pathToFileURL(join(dir, 'index.js')).href)) as {
      default: KafkaJs;
    };
    return { kafkajs: loaded.default, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}
