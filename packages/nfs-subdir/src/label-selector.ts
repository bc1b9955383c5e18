/**
 * Kubernetes labels and label selectors, as `kubectl -l` writes them, for the labels of the exports
 * of an installation serving several and a StorageClass's `exportSelector`: equality (`disk=ssd`,
 * `disk==ssd`, `disk!=hdd`), sets (`zone in (a,b)`, `zone notin (c)`) and existence (`legacy`,
 * `!legacy`), requirements separated by commas, all of which must hold. Parsed strictly: anything
 * else, `<` and `>` included, is refused with what was expected where.
 */

/** One requirement of a selector; every one must hold for labels to match. */
export type LabelRequirement =
  | { readonly key: string; readonly operator: 'exists' | 'does-not-exist' }
  | { readonly key: string; readonly operator: 'in' | 'not-in'; readonly values: readonly string[] };

/** A parsed label selector: its requirements, all of which must hold (none: every set of labels matches). */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
}

const namePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/u;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/u;

/**
 * Why `key` is not a label key (an optional DNS-subdomain prefix and `/`, then a name of at most 63
 * letters, digits, `-`, `_` and `.`, starting and ending alphanumeric), or `undefined` when it is one.
 */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const [prefix, name] = slash === -1 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)];
  const problems: string[] = [];
  if (prefix !== undefined && (prefix.length > 253 || !dnsSubdomain.test(prefix))) {
    problems.push('its prefix must be a DNS subdomain (lower case) of at most 253 characters');
  }
  if (name.length > 63 || !namePart.test(name)) {
    problems.push(
      'its name must be 1 to 63 letters, digits, -, _ or ., starting and ending with a letter or digit',
    );
  }
  return problems.length === 0
    ? undefined
    : `${JSON.stringify(key)} is not a label key: ${problems.join('; ')}`;
}

/** Why `value` is not a label value (empty, or a name as a key's), or `undefined` when it is one. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '' || (value.length <= 63 && namePart.test(value))) return undefined;
  return `${JSON.stringify(value)} is not a label value: it must be empty or 1 to 63 letters, digits, -, _ or ., starting and ending with a letter or digit`;
}

/** Whether `labels` satisfy every requirement of `selector`. */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return selector.requirements.every((requirement) => {
    const value = Object.hasOwn(labels, requirement.key) ? labels[requirement.key] : undefined;
    if (!('values' in requirement)) return (value !== undefined) === (requirement.operator === 'exists');
    const listed = value !== undefined && requirement.values.includes(value);
    // As Kubernetes: labels without the key satisfy `!=` and `notin`.
    return requirement.operator === 'in' ? listed : !listed;
  });
}

type Token =
  | { readonly kind: 'word'; readonly text: string; readonly at: number }
  | { readonly kind: '!' | '=' | '==' | '!=' | ',' | '(' | ')' | '<' | '>' | 'end'; readonly at: number };

// Characters that end a word; `<`, `>` only so that they are refused by name.
const operatorCharacters = new Set(['!', '=', ',', '(', ')', '<', '>']);

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at] as string;
    if (/\s/u.test(char)) {
      at += 1;
    } else if (text.startsWith('==', at) || text.startsWith('!=', at)) {
      tokens.push({ kind: text.slice(at, at + 2) as '==' | '!=', at });
      at += 2;
    } else if (operatorCharacters.has(char)) {
      tokens.push({ kind: char as '!' | '=' | ',' | '(' | ')' | '<' | '>', at });
      at += 1;
    } else {
      const start = at;
      while (
        at < text.length &&
        !/\s/u.test(text[at] as string) &&
        !operatorCharacters.has(text[at] as string)
      ) {
        at += 1;
      }
      tokens.push({ kind: 'word', text: text.slice(start, at), at: start });
    }
  }
  tokens.push({ kind: 'end', at: text.length });
  return tokens;
}

/**
 * Parses a label selector. An empty (or blank) selector has no requirements, so it selects everything,
 * as in Kubernetes.
 *
 * @throws Error saying what was expected at which character, or which key or value is malformed.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const tokens = tokenize(text);
  let index = 0;
  const peek = (): Token => tokens[index] as Token;
  const next = (): Token => tokens[index++] as Token;
  const fail = (token: Token, expected: string): never => {
    const found =
      token.kind === 'end'
        ? 'the end'
        : token.kind === 'word'
          ? JSON.stringify(token.text)
          : `"${token.kind}"`;
    const hint =
      token.kind === '<' || token.kind === '>' ? ' (the operators < and > are not accepted for exports)' : '';
    throw new Error(`expected ${expected} at character ${token.at + 1}, found ${found}${hint}`);
  };
  const key = (): string => {
    const token = next();
    if (token.kind !== 'word') return fail(token, 'a label key');
    const problem = labelKeyProblem(token.text);
    if (problem !== undefined) throw new Error(problem);
    return token.text;
  };
  const value = (): string => {
    const token = peek();
    // `key=` selects the empty value, as in Kubernetes.
    if (token.kind !== 'word') return '';
    index += 1;
    const problem = labelValueProblem(token.text);
    if (problem !== undefined) throw new Error(problem);
    return token.text;
  };
  const values = (): string[] => {
    const open = next();
    if (open.kind !== '(') return fail(open, '"(" opening a list of values');
    if (peek().kind === ')') return fail(peek(), 'a value (a set of values is never empty)');
    const list = [value()];
    for (let token = next(); token.kind !== ')'; token = next()) {
      if (token.kind !== ',') return fail(token, '"," or ")"');
      list.push(value());
    }
    return list;
  };
  const requirement = (): LabelRequirement => {
    if (peek().kind === '!') {
      index += 1;
      return { key: key(), operator: 'does-not-exist' };
    }
    const name = key();
    const token = peek();
    if (token.kind === ',' || token.kind === 'end') return { key: name, operator: 'exists' };
    index += 1;
    if (token.kind === '=' || token.kind === '==') return { key: name, operator: 'in', values: [value()] };
    if (token.kind === '!=') return { key: name, operator: 'not-in', values: [value()] };
    if (token.kind === 'word' && (token.text === 'in' || token.text === 'notin')) {
      return { key: name, operator: token.text === 'in' ? 'in' : 'not-in', values: values() };
    }
    return fail(token, 'one of =, ==, !=, in, notin, "," or the end');
  };
  const requirements: LabelRequirement[] = [];
  if (peek().kind === 'end') return { requirements };
  for (;;) {
    requirements.push(requirement());
    const token = next();
    if (token.kind === 'end') return { requirements };
    if (token.kind !== ',') fail(token, '"," or the end');
  }
}
