/** The interface's icon, served at /favicon.ico (where browsers ask for it) as SVG: a key on the brand colour. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#1f5f8b"/>
<circle cx="12" cy="16" r="6" fill="none" stroke="#fff" stroke-width="3"/>
<path d="M18 16h10M24 16v5M28 16v4" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/>
</svg>
`;
