/** Version of this package, read from its manifest. */
export { version } from './version.ts';
