/**
 * The Hermes icon (a winged speech bubble), as a LabIcon.
 */
import { LabIcon } from '@jupyterlab/ui-components';

const HERMES_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16">
  <g class="jp-icon3" fill="#616161">
    <path d="M4 4h12a3 3 0 0 1 3 3v6a3 3 0 0 1-3 3H9l-4 4v-4H4a3 3 0 0 1-3-3V7a3 3 0 0 1 3-3zm2 5v2h8V9H6z"/>
    <path d="M19.5 3.5l3.5-1.5-1.5 3.5-2-2z"/>
  </g>
</svg>`;

export const hermesIcon = new LabIcon({ name: 'hermes-jupyter:hermes', svgstr: HERMES_SVG });
