// Coverage counts our sources only: code run from the built bundle (dist/, exercised by the spawned-bin
// tests) measures the same lines again through esbuild's output and would only blur the figure.
export default () => ['src/**/*.ts']
