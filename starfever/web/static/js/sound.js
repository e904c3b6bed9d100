// Sound, generated with Web Audio (no files): off until the player turns it on, with a volume:
// cues (reel stops, coins, boosters, count-up ticks, stings) and a music bed under them.
// The AudioContext is made only when sound is switched on (a click: browsers allow audio
// after a gesture), so a player who never turns it on never gets one.
// Reduced motion (the system setting) asks for calm: with sound on there is then no music bed,
// no count-up ticks and no anticipation drone, and every other cue is a short sting (its first
// third of a second): what happened is still heard, nothing loops or runs on.

const ON_KEY = "sf.sound";
const VOLUME_KEY = "sf.volume";

// Each cue: notes of [frequency Hz, start s, length s, wave, relative gain].
const CUES = {
  spin: [[220, 0, 0.06, "triangle", 0.5]],
  stop: [[140, 0, 0.07, "square", 0.25], [90, 0.01, 0.08, "sine", 0.5]],
  anticipate: [[392, 0, 0.18, "sawtooth", 0.15], [440, 0.18, 0.18, "sawtooth", 0.18],
    [494, 0.36, 0.2, "sawtooth", 0.2]],
  win: [[659, 0, 0.12, "triangle", 0.5], [880, 0.1, 0.18, "triangle", 0.5]],
  feature: [[523, 0, 0.15, "square", 0.25], [659, 0.15, 0.15, "square", 0.25],
    [784, 0.3, 0.3, "square", 0.3]],
  coin: [[1318, 0, 0.08, "sine", 0.4], [1760, 0.06, 0.1, "sine", 0.3]],
  bigwin: [[523, 0, 0.2, "triangle", 0.5], [659, 0.2, 0.2, "triangle", 0.5],
    [784, 0.4, 0.2, "triangle", 0.5], [1046, 0.6, 0.5, "triangle", 0.6]],
  jackpot: [[784, 0, 0.15, "square", 0.3], [988, 0.15, 0.15, "square", 0.3],
    [1175, 0.3, 0.15, "square", 0.3], [1568, 0.45, 0.6, "triangle", 0.6]],
  tick: [[1200, 0, 0.03, "square", 0.12]],
  // the Hold & Cash sting: a rising fanfare over a low hit
  hcIntro: [[110, 0, 0.5, "sawtooth", 0.35], [392, 0, 0.12, "square", 0.25], [523, 0.12, 0.12, "square", 0.25],
    [659, 0.24, 0.12, "square", 0.28], [784, 0.36, 0.45, "triangle", 0.45], [1046, 0.36, 0.45, "triangle", 0.3]],
  // a big show's intro: a drum roll rising into it (celebrate.js; its final sting is jackpot/bigwin)
  showIntro: [[98, 0, 0.09, "square", 0.25], [110, 0.1, 0.09, "square", 0.25], [123, 0.2, 0.09, "square", 0.28],
    [131, 0.3, 0.09, "square", 0.3], [147, 0.4, 0.09, "square", 0.32], [196, 0.5, 0.5, "sawtooth", 0.3],
    [392, 0.5, 0.5, "triangle", 0.35]],
  booster: [[300, 0, 0.25, "sawtooth", 0.2], [600, 0.05, 0.25, "sawtooth", 0.2], [1200, 0.1, 0.3, "triangle", 0.3]],
};

// The music bed: a loop of 16 steps (bass, and an arpeggio on every other step), quiet under
// the cues; the feature's bed is faster and higher. [bass Hz per 4 steps, arpeggio Hz, step s]
const BEDS = {
  base: { bass: [110, 87.3, 98, 82.4], arp: [440, 523, 659, 523, 440, 392, 330, 392], step: 0.24 },
  feature: { bass: [130.8, 130.8, 155.6, 146.8], arp: [523, 659, 784, 1046, 784, 659, 784, 988], step: 0.16 },
};
const BED_GAIN = 0.07;

/** Under reduced motion: the cues left out (they repeat or run on), and a cue's longest span. */
const CALM_SILENT = new Set(["tick", "anticipate"]);
const CALM_SPAN_S = 0.35;

/** Whether the player's system asks for reduced motion (read at each cue: it may change). */
export function calm() {
  return Boolean(window.matchMedia?.("(prefers-reduced-motion: reduce)").matches);
}

export class Sound {
  constructor() {
    this.context = null;
    this.master = null;
    this.on = localStorage.getItem(ON_KEY) === "1";
    const saved = localStorage.getItem(VOLUME_KEY);
    const volume = saved === null ? NaN : Number(saved);
    this.volume = Number.isFinite(volume) && volume >= 0 && volume <= 1 ? volume : 0.6;
    this.played = [];  // the cues played (what the browser tests read)
    this.bedKind = "base";  // the bed asked for (the feature's during Hold & Cash)
    this.bedTimer = 0;
  }

  /** The music bed: "feature", or null for the base game's; it plays only while sound is on. */
  bed(kind) {
    this.bedKind = kind || "base";
    if (this.on && this.context) this.#startBed();
  }

  #startBed() {
    clearInterval(this.bedTimer);
    this.bedTimer = 0;
    if (calm()) return;  // reduced motion: no music bed
    const bed = BEDS[this.bedKind];
    let step = 0;
    let next = this.context.currentTime + 0.05;
    this.played.push(`bed:${this.bedKind}`);
    // schedule a little ahead on the audio clock (steady timing whatever the page does)
    this.bedTimer = setInterval(() => {
      if (!this.on || !this.context || calm()) { clearInterval(this.bedTimer); this.bedTimer = 0; return; }
      while (next < this.context.currentTime + 0.3) {
        if (step % 4 === 0) this.#note(bed.bass[(step / 4) % bed.bass.length], next, bed.step * 3.5, "triangle", BED_GAIN * 1.6);
        if (step % 2 === 0) this.#note(bed.arp[(step / 2) % bed.arp.length], next, bed.step * 0.9, "sine", BED_GAIN);
        next += bed.step;
        step = (step + 1) % 16;
      }
    }, 100);
  }

  #note(freq, at, length, wave, gain) {
    const osc = this.context.createOscillator();
    const env = this.context.createGain();
    osc.type = wave;
    osc.frequency.value = freq;
    env.gain.setValueAtTime(0, at);
    env.gain.linearRampToValueAtTime(gain * 0.4, at + 0.01);
    env.gain.exponentialRampToValueAtTime(0.0001, at + length);
    osc.connect(env).connect(this.master);
    osc.start(at);
    osc.stop(at + length + 0.02);
  }

  /** Switch sound on or off (call it from a click: the context may start only then). */
  setOn(on) {
    this.on = Boolean(on);
    localStorage.setItem(ON_KEY, this.on ? "1" : "0");
    if (this.on) this.#ensure();
    if (this.context) {
      if (this.on) { this.context.resume?.(); this.#startBed(); }
      else { clearInterval(this.bedTimer); this.context.suspend?.(); }
    }
  }

  setVolume(volume) {
    this.volume = Math.min(1, Math.max(0, Number(volume)));
    localStorage.setItem(VOLUME_KEY, String(this.volume));
    if (this.master) this.master.gain.value = this.volume;
  }

  #ensure() {
    if (this.context) return;
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return;
    this.context = new Context();
    this.master = this.context.createGain();
    this.master.gain.value = this.volume;
    this.master.connect(this.context.destination);
  }

  /** Play the cue ``name`` (nothing while sound is off). */
  play(name) {
    if (!this.on || !CUES[name]) return;
    this.#ensure();
    if (!this.context) return;
    // turned on in an earlier visit: the browser starts the context at the first gesture
    if (this.context.state === "suspended") this.context.resume?.();
    const quiet = calm();
    if (!this.bedTimer && !quiet) this.#startBed();  // turned on in an earlier visit: the bed starts now
    if (quiet && CALM_SILENT.has(name)) return;
    this.played.push(quiet ? `${name}:short` : name);
    const now = this.context.currentTime;
    for (const [freq, start, length, wave, gain] of CUES[name]) {
      if (quiet && start >= CALM_SPAN_S) continue;  // a short sting: the cue's first moment
      this.#note(freq, now + start, quiet ? Math.min(length, CALM_SPAN_S - start) : length, wave, gain);
    }
  }
}
