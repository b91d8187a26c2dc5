import type { ComponentChildren } from 'preact';

export type BadgeTone = 'good' | 'warning' | 'bad' | 'neutral' | 'info';

/** A short state word in a coloured pill; the word carries the meaning, the colour only repeats it. */
export function Badge({ tone, children }: { tone: BadgeTone; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}
