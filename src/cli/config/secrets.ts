/**
 * Header values in the config file: `${VAR}` references, expanded from the environment when the
 * profile is used, and literal secrets, which `profile show` never prints. Pure.
 */

/** `${NAME}`: a POSIX environment variable name in braces. */
const REF_RE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Auth schemes that are not themselves secret (`Bearer ${TOKEN}` holds no literal secret). */
const AUTH_SCHEME_RE = /^(Bearer|Basic|Token|Digest|Negotiate|ApiKey|Key)\s+/i;

/** A reason the template is malformed (a `${` that is not `${NAME}`), or undefined when it is fine. */
export function templateProblem(template: string): string | undefined {
  const stripped = template.replace(REF_RE, '');
  if (stripped.includes('${')) return 'has a "${" that is not a ${NAME} reference (NAME: letters, digits and _, not starting with a digit)';
  return undefined;
}

/** The variables a template uses, in order, without duplicates. */
export function templateVariables(template: string): string[] {
  return [...new Set([...template.matchAll(REF_RE)].map((m) => m[1]!))];
}

/**
 * Expands `${NAME}` from the environment. Returns the value, or the first variable that is unset
 * or empty (an empty token would send an empty credential, which is never what was meant).
 */
export function expandTemplate(template: string, env: NodeJS.ProcessEnv): { ok: true; value: string } | { ok: false; missing: string } {
  for (const name of templateVariables(template)) {
    const v = env[name];
    if (v === undefined || v === '') return { ok: false, missing: name };
  }
  return { ok: true, value: template.replace(REF_RE, (_, name: string) => env[name]!) };
}

/**
 * Whether the value holds a literal secret: anything besides `${NAME}` references, white space
 * and a leading auth scheme word. Every header value in the config counts (we cannot know which
 * custom header carries a credential).
 */
export function hasLiteralSecret(template: string): boolean {
  const rest = template.replace(AUTH_SCHEME_RE, '').replace(REF_RE, '');
  // Separators between references (`${USER}:${PASS}`) are not a secret either.
  return rest.replace(/[\s:;,./=-]/g, '') !== '';
}

/** The value for display: references and a leading auth scheme as written, every literal part as `[redacted]`. */
export function redactTemplate(template: string): string {
  if (!hasLiteralSecret(template)) return template;
  const scheme = AUTH_SCHEME_RE.exec(template)?.[0] ?? '';
  const rest = template.slice(scheme.length);
  // Keep the references visible (they name where the secret comes from); hide what is between them.
  const parts: string[] = [];
  let last = 0;
  for (const m of rest.matchAll(REF_RE)) {
    if (m.index > last && rest.slice(last, m.index).trim() !== '') parts.push('[redacted]');
    parts.push(m[0]);
    last = m.index + m[0].length;
  }
  if (rest.slice(last).trim() !== '') parts.push('[redacted]');
  return `${scheme}${parts.join('')}`;
}
