// The strict `body` part parser and its schema validators live in @org/packager (ADR 0138).
export { MAX_BODY_DEPTH, bodyValidator, parseBody } from '@org/packager';
export type { BodyValidator } from '@org/packager';
