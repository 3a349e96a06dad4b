import type { ReactNode } from 'react';

/** A titled card; `id` makes it a landmark the skip links can reach. */
export function Panel(props: {
  id: string;
  title: string;
  subtitle?: ReactNode;
  actions?: ReactNode;
  className?: string;
  children: ReactNode;
}) {
  return (
    <section
      className={`panel ${props.className ?? ''}`}
      id={props.id}
      aria-labelledby={`${props.id}-title`}
    >
      <header className="panel-head">
        <div>
          <h2 id={`${props.id}-title`}>{props.title}</h2>
          {props.subtitle ? <p className="panel-subtitle">{props.subtitle}</p> : null}
        </div>
        {props.actions ? <div className="panel-actions">{props.actions}</div> : null}
      </header>
      {props.children}
    </section>
  );
}
