import type { Highlight } from '../live/highlight.ts';
import { SCENARIO_ROWS, sentence } from '@outbox/dashboard-api/teaching';

/** The lesson of the row that just happened, in one line, announced to screen readers. */
export function LessonBanner({ highlight }: { highlight: Highlight | null }) {
  const row =
    highlight?.tone === 'failure' ? SCENARIO_ROWS.find((r) => r.id === highlight.row) : undefined;
  return (
    <div className="lesson" aria-live="polite" data-testid="lesson">
      {row ? (
        <p className={`lesson-card lesson-${row.group}`}>
          <b>Just happened: {row.title}.</b> {sentence(row.consequence)}{' '}
          <span className="lesson-fix">
            {row.group === 'dual-write' ? 'With the outbox: ' : 'The fix: '}
            {row.fix}
          </span>
        </p>
      ) : null}
    </div>
  );
}
