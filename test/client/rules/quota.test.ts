import { describe, expect, it } from 'vitest';
import { findPolicy } from '../../../src/client/rules/quota.js';
import { elsewhere, Host, ietf, learn, open } from './harness.js';

describe('declared quota', () => {
  it('counts requests in flight against what the server says is left', () => {
    const h = new Host(open);
    const tickets = [h.send(0), h.send(0), h.send(0)];
    h.answer(tickets[0]!, 200, ietf(5, 1), 1);
    // 5 left, 2 still in flight that the server may not have counted yet.
    expect(findPolicy(h.state.quota, 's')?.remaining).toBe(3);
  });

  it('never raises its estimate above what the server had left from an answer overtaken by a newer one', () => {
    const h = new Host(open);
    const a = h.send(0);
    const b = h.send(0);
    h.answer(b, 200, ietf(4, 1), 1); // newer request, reported first
    expect(findPolicy(h.state.quota, 's')?.remaining).toBe(3);
    // The older report arrives late, not applied (5 would be too many). But the server had more
    // left when it counted `a`: it counted `a` first, and b's 4 has `a` in it already.
    h.answer(a, 200, ietf(5, 1), 2);
    expect(findPolicy(h.state.quota, 's')?.remaining).toBe(4);
  });

  it('an overtaken answer the server counted after the newer one gives nothing back', () => {
    const h = new Host(open);
    const a = h.send(0);
    const b = h.send(0);
    h.answer(b, 200, ietf(5, 1), 1); // counted first by the server, `a` not in its 5
    expect(findPolicy(h.state.quota, 's')?.remaining).toBe(4);
    h.answer(a, 200, ietf(4, 1), 2);
    expect(findPolicy(h.state.quota, 's')?.remaining).toBe(4);
  });

  it('answers of one round coming back last sent first leave the estimate at what the server has', () => {
    // Sent in one round (the server counts them in that order), answered last sent first over
    // several connections: before, the first answer took the others off as in flight although
    // its report counted them, and their answers, older, were ignored: 3 left read as 0.
    const h = new Host(open);
    const round = [h.send(0), h.send(0), h.send(0)];
    h.answer(round[2]!, 200, ietf(3, 1), 1);
    expect(findPolicy(h.state.quota, 's')?.remaining).toBe(1);
    h.answer(round[0]!, 200, ietf(5, 1), 1);
    h.answer(round[1]!, 200, ietf(4, 1), 1);
    expect(findPolicy(h.state.quota, 's')?.remaining).toBe(3);
    expect(h.check(1, 1).ok).toBe(true);
  });

  it('ignores a report whose request this state never admitted, so later reports still count', () => {
    // A shared state that expired (or a local copy's request settled on the shared state) while
    // the request was out: its ticket's number is ahead of the state's own.
    const h = new Host(open);
    h.answer(elsewhere({ seq: 40, probed: [] }), 200, ietf(0, 5), 0);
    expect(h.state.quota?.applied).toBe(0);
    h.answer(h.send(0), 200, ietf(6, 1), 1);
    expect(findPolicy(h.state.quota, 's')?.remaining).toBe(6);
  });

  it('records a request sent with a ticket issued elsewhere so that its settle undoes it exactly', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, ietf(1, 1), 0);
    const before = structuredClone(h.state);
    // Issued on a copy where 's' had no room: a probe there, so a probe here.
    const ticket = elsewhere({ probed: ['s'] });
    h.replay(ticket, 0);
    expect(findPolicy(h.state.quota, 's')?.probes).toBe(1);
    expect(h.inFlight).toEqual({ units: 1, requests: 1 });
    h.answer(ticket, 200, {}, 0);
    expect(findPolicy(h.state.quota, 's')).toEqual(findPolicy(before.quota, 's'));
    expect(h.inFlight).toEqual({ units: 0, requests: 0 });
  });

  it('holds until the reset, then sends one probe, and its answer tells the rest', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, ietf(0, 2), 0);
    expect(h.check(1, 1999)).toMatchObject({ ok: false, waitMs: 1, reason: 'learned-limit' });
    const probe = h.send(2000);
    expect(probe.probed).toEqual(['s']);
    expect(h.check(1, 2000)).toMatchObject({ ok: false, waitMs: undefined, reason: 'probe' });
    h.answer(probe, 200, ietf(9, 1), 2001);
    for (let i = 0; i < 9; i++) h.send(2001);
    expect(h.check(1, 2001).ok).toBe(false);
  });

  it('lets another probe go when the first one got no answer', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, ietf(0, 1), 0);
    const probe = h.send(1000);
    h.noAnswer(probe, 1001); // network error
    expect(h.check(1, 1001).ok).toBe(true);
  });

  it('holds while any of several policies is spent, until the latest reset', () => {
    const h = new Host(open);
    h.answer(
      h.send(0),
      200,
      {
        'ratelimit-policy': '"second";q=10;w=1, "day";q=1000;w=86400',
        ratelimit: '"second";r=8;t=1, "day";r=0;t=3600',
      },
      0,
    );
    expect(h.check(1, 0)).toEqual({
      ok: false,
      waitMs: 3_600_000,
      reason: 'learned-limit',
      policy: 'day',
    });
  });

  it('charges a request its cost', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, ietf(10, 1), 0);
    h.send(0, 4);
    h.send(0, 4);
    expect(h.check(3, 0).ok).toBe(false);
    expect(h.check(2, 0).ok).toBe(true);
  });

  it('forgets a policy the server stopped reporting, once its reset has passed', () => {
    const h = new Host(open);
    h.answer(
      h.send(0),
      200,
      { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' },
      0,
    );
    h.answer(h.send(1500), 200, ietf(5, 1), 1500);
    expect(h.state.quota?.policies.map((p) => p.key)).toEqual(['s']);
  });

  it('keeps the state plain JSON', () => {
    const h = new Host(learn);
    h.answer(h.send(0), 200, ietf(5, 1), 0);
    expect(JSON.parse(JSON.stringify(h.state))).toEqual(h.state);
  });
});

describe('concurrency policies', () => {
  const conc = (r: number) => ({
    'ratelimit-policy': '"slots";q=3;qu="concurrent-requests"',
    ratelimit: `"slots";r=${r}`,
  });

  it('counts slots: a request frees its slot when it ends, and others wait for that', () => {
    const h = new Host(open);
    const first = h.send(0);
    // Reported while `first` held a slot: 2 free besides it. Its body still holds it (the server
    // counts a request until its response ends); 3 once that ends.
    h.answer(first, 200, conc(2), 1);
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(2);
    h.bodyEnds(first, 1);
    expect(findPolicy(h.state.quota, 'slots')?.remaining).toBe(3);
    const held = [h.send(1), h.send(1), h.send(1)];
    expect(h.check(1, 1)).toMatchObject({ ok: false, waitMs: undefined, reason: 'learned-limit' });
    // Time does not free a slot.
    expect(h.check(1, 60_000).ok).toBe(false);
    // An answer does, even one whose report is stale.
    h.noAnswer(held[0]!, 2);
    expect(h.check(1, 2).ok).toBe(true);
  });

  // Issue 23: the mock server writes `r` when it admits a request and sends it when the handler
  // ends. Read as news from the answer's moment, requests of the caller that ended since stayed
  // taken: four sent at once and answered left one slot of four free, not four.
  const four = (r: number) => ({
    'ratelimit-policy': '"slots";q=4;qu="concurrent-requests"',
    ratelimit: `"slots";r=${r}`,
  });
  const slots = (h: Host) => findPolicy(h.state.quota, 'slots')?.remaining;

  it("reads a report as of its request's admission: the caller's requests ended since are free", () => {
    const h = new Host(open);
    const sent = [h.send(0), h.send(0), h.send(0), h.send(0)];
    expect(sent.map((t) => t.n)).toEqual([1, 2, 3, 4]);
    // Admitted in order, each report written then: 3, 2, 1, 0 left.
    sent.forEach((ticket, i) => {
      h.answer(ticket, 200, four(3 - i), 50);
      expect(slots(h), `answer ${i}`).toBe(i);
      h.bodyEnds(ticket, 50);
      expect(slots(h), `body ${i}`).toBe(i + 1);
    });
    for (let i = 0; i < 4; i++) h.send(50);
    expect(h.check(1, 50)).toMatchObject({ ok: false, waitMs: undefined, reason: 'learned-limit' });
  });

  it("keeps another caller's slots taken, and the caller's own in flight or with a body open", () => {
    const h = new Host(open);
    // Another caller holds 1 of the 4 throughout.
    const a = h.send(0);
    const b = h.send(0);
    h.answer(a, 200, four(2), 50);
    expect(slots(h)).toBe(1); // a's body open, b in flight, 1 elsewhere
    const c = h.send(50); // the server will count a (open), b and c
    expect(c.n).toBe(3);
    expect(h.check(1, 50).ok).toBe(false);
    h.answer(b, 200, four(1), 51);
    expect(slots(h)).toBe(0); // a and b open, c in flight, 1 elsewhere
    h.bodyEnds(a, 52);
    h.bodyEnds(b, 52);
    expect(slots(h)).toBe(2);
    // Written when c was admitted, a's and b's bodies still open: none left then.
    h.answer(c, 200, four(0), 100);
    expect(slots(h)).toBe(2);
    h.bodyEnds(c, 100);
    expect(slots(h)).toBe(3);
  });

  it('reads the report of a ticket issued without n as before: r less what is unanswered', () => {
    const h = new Host(open);
    const ticket = elsewhere({ seq: 1, at: 0 });
    h.replay(ticket, 0);
    h.answer(ticket, 200, four(2), 50);
    // Its own slot is in r and in what is unanswered: 2, not 2 + 0 - 1.
    expect(slots(h)).toBe(2);
  });

  it('never counts more slots free than the limit leaves beside what is held', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, four(3), 1);
    // A ticket issued on another copy of the state, whose count is not this copy's.
    const ticket = elsewhere({ seq: 2, at: 1, n: 9 });
    h.replay(ticket, 1);
    expect(ticket.n).toBe(9); // a replay applies the ticket as issued
    h.answer(ticket, 200, four(3), 2);
    // r + n - held would be 3 + 9 - 2: the limit leaves 2 beside the two open bodies.
    expect(slots(h)).toBe(2);
  });
});
