import { FRAME_BURST, FRAMES_PER_SECOND, takeFrame } from '../../shared/domain/live/frame-budget';

describe("a live connection's frame budget (decisions §13)", () => {
  it('takes a burst of FRAME_BURST frames, refuses the next once, then drops the rest', () => {
    const now = 1_000_000;
    const outcomes = Array.from({ length: FRAME_BURST + 3 }, () => takeFrame('burst', now));

    expect(outcomes.slice(0, FRAME_BURST).every((outcome) => outcome === 'allowed')).toBe(true);
    expect(outcomes.slice(FRAME_BURST)).toEqual(['exceeded', 'dropped', 'dropped']);
  });

  it('refills at FRAMES_PER_SECOND, so fast typing (30 frames a second) never runs out', () => {
    let now = 2_000_000;
    const outcomes: string[] = [];
    for (let second = 0; second < 60; second += 1) {
      for (let frame = 0; frame < 30; frame += 1) outcomes.push(takeFrame('typist', (now += 1000 / 30)));
    }

    expect(FRAMES_PER_SECOND).toBeGreaterThan(30);
    expect(outcomes.every((outcome) => outcome === 'allowed')).toBe(true);
  });

  it("keeps one connection's budget apart from another's", () => {
    const now = 3_000_000;
    for (let i = 0; i <= FRAME_BURST; i += 1) takeFrame('flooder', now);

    expect(takeFrame('flooder', now)).toBe('dropped');
    expect(takeFrame('neighbour', now)).toBe('allowed');
  });
});
