/** The page's session: its id in the URL's `#session=`, or a new one made on the server (then put in the URL). */
export async function sessionId(): Promise<string> {
  const given = /#session=([A-Za-z0-9._-]+)/.exec(location.hash)?.[1];
  if (given) return given;
  const created = await fetch('/api/sessions', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, body: '{}' });
  const { id } = (await created.json()) as { id: string };
  history.replaceState(null, '', `#session=${id}`);
  return id;
}
