/** How far a copy has come (safe-fs's `CopyProgress` fits). */
export interface CloneProgress {
  readonly entries: number;
  readonly bytes: number;
  /** Special files left out of the copy. */
  readonly skipped: number;
}
