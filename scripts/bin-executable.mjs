// The compiler writes dist/cli/main.js without the execute bit; `npx wcs` runs the package's bin
// directly, so it must be executable after every build (npm sets the bit only when it links a bin).
import { chmodSync } from 'node:fs';

chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
