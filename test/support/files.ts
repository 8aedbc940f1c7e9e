import { stat } from 'node:fs/promises';

/** Whether anything is at `p` (a file, a directory, a link that resolves). */
export const exists = (p: string): Promise<boolean> =>
  stat(p).then(
    () => true,
    () => false,
  );
