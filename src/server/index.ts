/**
 * limited-client/server: the mock rate-limited server and its algorithms (Node only).
 * Its exports arrive with their issues; the entry exists so that the package's exports map is
 * complete from the start.
 *
 * @module
 */
export {};
