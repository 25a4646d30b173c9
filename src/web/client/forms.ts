/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/** Small form helpers: copy buttons, repeatable rows, fee estimate buttons, PSBT files, confirmations, policy/descriptor mode. */

function copyButtons(root: ParentNode): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>('[data-copy]')) {
    button.addEventListener('click', async () => {
      const source = document.querySelector(button.dataset.copy ?? '');
      const text = source instanceof HTMLTextAreaElement || source instanceof HTMLInputElement ? source.value : (source?.textContent ?? '');
      const label = button.textContent;
      try {
        await navigator.clipboard.writeText(text.trim());
        button.textContent = 'Copied';
      } catch {
        if (source instanceof HTMLTextAreaElement) source.select();
        button.textContent = 'Select and copy';
      }
      setTimeout(() => (button.textContent = label), 2000);
    });
  }
}

/** Renumbers ids, labels and radio values of repeated rows so every field keeps its own label. */
function renumber(container: Element, rowSelector: string): void {
  const rows = [...container.querySelectorAll(rowSelector)];
  rows.forEach((row, i) => {
    const legend = row.querySelector('legend');
    if (legend) legend.textContent = legend.textContent!.replace(/\d+$/, String(i + 1));
    for (const el of row.querySelectorAll<HTMLElement>('[id]')) el.id = el.id.replace(/-\d+$/, `-${i}`);
    for (const el of row.querySelectorAll<HTMLLabelElement>('label[for]')) el.htmlFor = el.htmlFor.replace(/-\d+$/, `-${i}`);
    for (const el of row.querySelectorAll<HTMLInputElement>('input[type=radio]')) el.value = String(i);
    for (const el of row.querySelectorAll('.field-error')) el.remove();
  });
}

function repeatableRows(root: ParentNode, containerSelector: string, rowSelector: string): void {
  const container = root.querySelector(containerSelector);
  const form = container?.closest('form');
  if (!container || !form) return;
  form.querySelector('[data-add-row]')?.addEventListener('click', () => {
    const last = container.querySelector(`${rowSelector}:last-of-type`) ?? container.querySelector(rowSelector);
    if (!last) return;
    const copy = last.cloneNode(true) as HTMLElement;
    for (const field of copy.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input:not([type=radio]), textarea')) field.value = '';
    for (const radio of copy.querySelectorAll<HTMLInputElement>('input[type=radio]')) radio.checked = false;
    container.append(copy);
    renumber(container, rowSelector);
    copy.querySelector<HTMLElement>('input, textarea')?.focus();
  });
  container.addEventListener('click', (event) => {
    const button = (event.target as Element).closest('[data-remove-row]');
    if (!button) return;
    if (container.querySelectorAll(rowSelector).length <= 1) return;
    button.closest(rowSelector)?.remove();
    renumber(container, rowSelector);
  });
}

function feeEstimates(root: ParentNode): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>('[data-fee-rate]')) {
    button.addEventListener('click', () => {
      const input = document.getElementById('fee_rate') as HTMLInputElement | null;
      if (input) input.value = button.dataset.feeRate ?? '';
    });
  }
}

function toBase64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

/** Signed PSBT files (binary or base64 text) are read into the text field the server takes, one per line. */
function psbtFiles(root: ParentNode): void {
  const input = root.querySelector<HTMLInputElement>('[data-psbt-files]');
  const form = input?.closest('form');
  const text = form?.querySelector<HTMLTextAreaElement>('textarea[name=psbt]');
  if (!input || !form || !text) return;
  input.addEventListener('change', async () => {
    const copies: string[] = [];
    for (const file of input.files ?? []) {
      const bytes = new Uint8Array(await file.arrayBuffer());
      const magic = bytes[0] === 0x70 && bytes[1] === 0x73 && bytes[2] === 0x62 && bytes[3] === 0x74 && bytes[4] === 0xff;
      copies.push(magic ? toBase64(bytes) : new TextDecoder().decode(bytes).trim());
    }
    text.value = [text.value.trim(), ...copies].filter((c) => c !== '').join('\n');
  });
}

/** A text file chosen in `<input type="file" data-text-file="ID">` is read into the text field with that id. */
function textFiles(root: ParentNode): void {
  for (const input of root.querySelectorAll<HTMLInputElement>('input[type=file][data-text-file]')) {
    input.addEventListener('change', async () => {
      const target = document.getElementById(input.dataset.textFile ?? '') as HTMLTextAreaElement | null;
      const file = input.files?.[0];
      if (target && file) target.value = await file.text();
    });
  }
}

function confirmations(root: ParentNode): void {
  for (const form of root.querySelectorAll<HTMLFormElement>('form[data-confirm]')) {
    form.addEventListener('submit', (event) => {
      if (!confirm(form.dataset.confirm ?? 'Are you sure?')) event.preventDefault();
    });
  }
}

/** The wallet form shows the fields of the chosen way to give the keys. */
function keyMode(root: ParentNode): void {
  const form = root.querySelector<HTMLFormElement>('[data-wallet-form]');
  if (!form) return;
  const update = () => {
    const mode = form.querySelector<HTMLInputElement>('input[name=mode]:checked')?.value ?? 'policy';
    for (const part of form.querySelectorAll<HTMLElement>('[data-mode]')) part.hidden = part.dataset.mode !== mode;
  };
  form.addEventListener('change', update);
  update();
}

/** The recovery delay's block count follows the days typed (144 blocks a day, as the server turns it). */
function delayBlocks(root: ParentNode): void {
  const input = root.querySelector<HTMLInputElement>('[data-delay-days]');
  const shown = root.querySelector<HTMLElement>('[data-delay-blocks]');
  if (!input || !shown) return;
  const rest = '; spend (refresh) coins before their delay ends to keep the recovery closed.';
  input.addEventListener('input', () => {
    const days = input.value.trim();
    shown.textContent = (/^\d{1,9}$/.test(days) ? `${Number(days)} days = ${Number(days) * 144} blocks` : 'A day is 144 blocks') + rest;
  });
}

export function enhanceForms(root: ParentNode): void {
  copyButtons(root);
  repeatableRows(root, '[data-recipient-rows]', '[data-recipient-row]');
  repeatableRows(root, '[data-key-rows]', '[data-key-row]');
  feeEstimates(root);
  psbtFiles(root);
  textFiles(root);
  confirmations(root);
  keyMode(root);
  delayBlocks(root);
}
