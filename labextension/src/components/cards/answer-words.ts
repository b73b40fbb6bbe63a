/**
 * How an answered card reads: "Allowed once by alice", "Denied by a standing rule",
 * "Not answered in time", "Accepted by bob". The same function as the server's
 * `wording.answer_words`, over the same table (generated.ts), so a card reads alike
 * in the sidebar, the Lab renderer and a saved notebook.
 */
import { ANSWER_WORDS, EXPIRED_REASON, IAnsweredBy } from '../../api/generated';

const WORDS: { readonly [key: string]: string } = ANSWER_WORDS;

/**
 * `answer`: an approval's choice, `answered` for a question, a proposal's decision.
 * `by` null is an old row that did not say who answered: the answer alone, with its reason.
 */
export function answerWords(answer: string, by: IAnsweredBy | null | undefined, reason?: string | null): string {
  const words = WORDS[answer] ?? answer;
  switch (by?.kind) {
    case 'timeout':
      return reason === EXPIRED_REASON ? ANSWER_WORDS.timeout : ANSWER_WORDS.not_answered;
    case 'policy': {
      const group = answer === 'deny' || answer === 'answered' ? answer : answer.startsWith('allow') ? 'allow' : '';
      return WORDS[`policy_${group}`] ?? words;
    }
    case 'person':
      return by.user ? ANSWER_WORDS.by_person.replace('{answer}', words).replace('{user}', by.user) : words;
    default:
      return reason && reason !== 'answered' ? `${words} (${reason})` : words;
  }
}
