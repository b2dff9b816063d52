/**
 * The type map of a datatype, compiled for copying: where its bytes lie (segments, merged where
 * they touch) and what elements it holds in order (runs of one element kind, for `getElements`
 * and for detecting mismatched signatures). Built once per constructor call; pack and unpack only
 * walk the segments.
 */
export class TypeMap {
  /** Byte displacement of each segment, relative to the buffer start, in type-map order. */
  readonly segDisp: number[] = [];
  /** Byte length of each segment. */
  readonly segLen: number[] = [];
  /** Element kind (`DataKind`) of each run of elements, in type-map order. */
  readonly runKind: number[] = [];
  /** Elements in each run. */
  readonly runCount: number[] = [];
  /** Bytes per element of each run. */
  readonly runSize: number[] = [];

  /** Appends one segment, merged with the previous one when it continues it. */
  addSegment(disp: number, len: number): void {
    if (len === 0) return;
    const last = this.segDisp.length - 1;
    if (last >= 0 && this.segDisp[last]! + this.segLen[last]! === disp) {
      this.segLen[last]! += len;
      return;
    }
    this.segDisp.push(disp);
    this.segLen.push(len);
  }

  /** Appends `count` elements of one kind, merged with the previous run of the same kind. */
  addRun(kind: number, size: number, count: number): void {
    if (count === 0) return;
    const last = this.runKind.length - 1;
    if (last >= 0 && this.runKind[last] === kind) {
      this.runCount[last]! += count;
      return;
    }
    this.runKind.push(kind);
    this.runSize.push(size);
    this.runCount.push(count);
  }

  /** Appends `count` copies of `other`, the j-th shifted by `disp + j * stride` bytes. */
  addCopies(other: TypeMap, disp: number, count: number, stride: number): void {
    for (let j = 0; j < count; j++) {
      const shift = disp + j * stride;
      for (let s = 0; s < other.segDisp.length; s++) {
        this.addSegment(other.segDisp[s]! + shift, other.segLen[s]!);
      }
    }
    if (other.runKind.length === 1) {
      this.addRun(other.runKind[0]!, other.runSize[0]!, other.runCount[0]! * count);
      return;
    }
    for (let j = 0; j < count; j++) {
      for (let r = 0; r < other.runKind.length; r++) {
        this.addRun(other.runKind[r]!, other.runSize[r]!, other.runCount[r]!);
      }
    }
  }

  private readonly wordCache = new Map<number, SegmentWords>();

  /** The segments in words of `w` bytes (all of them multiples of `w`), computed once per `w`. */
  words(w: number): SegmentWords {
    let sw = this.wordCache.get(w);
    if (!sw) {
      const n = this.segDisp.length;
      const disp = new Int32Array(n);
      const len = new Int32Array(n);
      let uniform = n > 0 ? this.segLen[0]! / w : 0;
      for (let s = 0; s < n; s++) {
        disp[s] = this.segDisp[s]! / w;
        len[s] = this.segLen[s]! / w;
        if (len[s] !== uniform) uniform = 0;
      }
      let step = n > 1 ? disp[1]! - disp[0]! : 0;
      for (let k = 2; k < n && step !== 0; k++) if (disp[k]! - disp[k - 1]! !== step) step = 0;
      sw = { disp, len, uniform, step };
      this.wordCache.set(w, sw);
    }
    return sw;
  }

  /** Number of basic elements in one instance. */
  get elements(): number {
    let n = 0;
    for (const c of this.runCount) n += c;
    return n;
  }

  /** The one element kind of every element, or -1 for a mixed (or empty) map. */
  get homogeneousKind(): number {
    return this.runKind.length === 1 ? this.runKind[0]! : -1;
  }

  /**
   * Basic elements in the first `bytes` bytes of one instance's packed form: whole elements only,
   * -1 when `bytes` ends inside an element.
   */
  elementsIn(bytes: number): number {
    let n = 0;
    let left = bytes;
    for (let r = 0; r < this.runKind.length && left > 0; r++) {
      const runBytes = this.runCount[r]! * this.runSize[r]!;
      if (left >= runBytes) {
        n += this.runCount[r]!;
        left -= runBytes;
        continue;
      }
      if (left % this.runSize[r]! !== 0) return -1;
      return n + left / this.runSize[r]!;
    }
    return n;
  }
}

/**
 * Segments in words: displacement and length of each; `uniform` = the common length, or 0;
 * `step` = the common distance between consecutive segments (a vector), or 0.
 */
export interface SegmentWords {
  disp: Int32Array;
  len: Int32Array;
  uniform: number;
  step: number;
}
