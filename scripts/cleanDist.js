// `prepare` builds from nothing: a file deleted from src/ must not live on in the package.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
