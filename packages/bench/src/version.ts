import { createRequire } from 'node:module';

const manifest: { version: string } = createRequire(import.meta.url)('../package.json');

/** Version of this package, read from its manifest. */
export const version: string = manifest.version;
