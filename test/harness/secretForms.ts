/** The ways a secret value may be written in a stored object: as typed, URL- or form-encoded, base64, HTML- or JSON-escaped. */
export function secretForms(value: string): string[] {
  const html = value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  const base64 = Buffer.from(value).toString('base64');
  return [
    ...new Set([
      value,
      encodeURIComponent(value),
      new URLSearchParams({ v: value }).toString().slice(2),
      base64.replace(/=+$/, ''),
      base64.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'),
      html,
      JSON.stringify(value).slice(1, -1),
    ]),
  ];
}

/** Which of `secrets` `text` holds in any form, said without the secret (for an assertion's message); undefined when none. */
export function foundSecret(text: string, secrets: readonly string[]): string | undefined {
  for (const [i, secret] of secrets.entries()) {
    const forms = secretForms(secret);
    const at = forms.findIndex((candidate) => text.includes(candidate));
    if (at >= 0) return `secret #${i + 1} (${at === 0 ? 'as typed' : `encoded, form ${at}`})`;
  }
  return undefined;
}
