/**
 * How much the agent may do in the session's notebook (docs/autonomy.md): the four levels,
 * least to most, their names and what each lets the agent do. The server caps the levels a
 * person may choose (`max_autonomy`); the default is Propose.
 */
export type Autonomy = 'ask' | 'propose' | 'agent' | 'agent_auto';

export const AUTONOMY_LEVELS: readonly Autonomy[] = ['ask', 'propose', 'agent', 'agent_auto'];
export const DEFAULT_AUTONOMY: Autonomy = 'propose';

export const AUTONOMY_WORDS: { readonly [level in Autonomy]: string } = {
  ask: 'Ask',
  propose: 'Propose',
  agent: 'Agent',
  agent_auto: 'Agent, no asking'
};

export const AUTONOMY_HELP: { readonly [level in Autonomy]: string } = {
  ask: 'Hermes only reads the notebook; it changes and runs nothing.',
  propose: 'Every change is a proposal you accept or reject; nothing runs.',
  agent: 'Hermes changes cells itself and asks before each run of code.',
  agent_auto: 'Hermes changes and runs cells without asking.'
};

export function isAutonomy(value: unknown): value is Autonomy {
  return typeof value === 'string' && (AUTONOMY_LEVELS as readonly string[]).includes(value);
}

/** The session's level as the server says it; the default when it says nothing known. */
export function autonomyOf(session: unknown): Autonomy {
  const value = session && typeof session === 'object' ? (session as { autonomy?: unknown }).autonomy : null;
  return isAutonomy(value) ? value : DEFAULT_AUTONOMY;
}

/** The highest level the server allows, when it says (`max_autonomy`); null when it does not. */
export function capOf(source: unknown): Autonomy | null {
  const value = source && typeof source === 'object' ? (source as { max_autonomy?: unknown }).max_autonomy : null;
  return isAutonomy(value) ? value : null;
}

/**
 * The levels to offer: up to the cap when known (plus the current level, should the cap have
 * been lowered since it was chosen); all of them when the server does not say, in which case a
 * refusal comes back as the server's sentence.
 */
export function offeredLevels(cap: Autonomy | null, current: Autonomy): Autonomy[] {
  if (!cap) {
    return [...AUTONOMY_LEVELS];
  }
  const top = AUTONOMY_LEVELS.indexOf(cap);
  return AUTONOMY_LEVELS.filter((level, i) => i <= top || level === current);
}
