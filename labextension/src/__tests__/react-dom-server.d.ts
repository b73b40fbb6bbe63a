// react-dom comes with JupyterLab's packages; only this one function is used by the specs.
declare module 'react-dom/server' {
  export function renderToStaticMarkup(element: unknown): string;
}
