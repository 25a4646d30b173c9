/** The size-estimation input type of a descriptor's outputs (what spending one of them will cost). */
import type { InputType } from '../size.js';
import type { Descriptor } from './descriptor.js';

export function inputTypeOf(descriptor: Descriptor): InputType {
  const m = descriptor.threshold;
  const n = descriptor.keys.length;
  switch (descriptor.type) {
    case 'wpkh':
    case 'sh-wpkh':
    case 'pkh':
    case 'tr':
      return { kind: descriptor.type };
    case 'wsh-multi':
    case 'wsh-sortedmulti':
      return { kind: 'wsh-multi', m, n };
    case 'sh-wsh-multi':
    case 'sh-wsh-sortedmulti':
      return { kind: 'sh-wsh-multi', m, n };
    case 'sh-multi':
    case 'sh-sortedmulti':
      return { kind: 'sh-multi', m, n };
  }
}
