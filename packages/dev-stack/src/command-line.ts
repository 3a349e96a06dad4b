/** A wrong option or value: printed as one line with the usage, never as a stack trace. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface CommandLine {
  /**
   * Runs the parse (node's `parseArgs`, or checks of values) and turns what it throws
   * for a bad option or value into a usage message and exit code 2.
   */
  parse<T>(parse: () => T): T;
  /** Prints `name: message` and the usage line, exits 2. */
  fail(message: string): never;
}

/**
 * The front of every command (stack, demo, chaos, ops, soak, bench): `--help` or `-h`
 * anywhere prints `usage` and exits 0; a bad option or value prints one line naming it
 * and the usage's first line to stderr and exits 2, so that a user never meets a stack
 * trace for a typing mistake.
 */
export function commandLine(name: string, usage: string, argv: readonly string[]): CommandLine {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage.trimEnd()}\n`);
    process.exit(0);
  }
  const fail = (message: string): never => {
    process.stderr.write(
      `${name}: ${message}\n${usage.split('\n')[0]}\n(${name} --help for the whole usage)\n`,
    );
    process.exit(2);
  };
  return {
    parse<T>(parse: () => T): T {
      try {
        return parse();
      } catch (error) {
        if (isUsageProblem(error)) fail((error as Error).message);
        throw error;
      }
    },
    fail,
  };
}

function isUsageProblem(error: unknown): boolean {
  if (error instanceof UsageError) return true;
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}
