export * from './coverage.ts';
export * from './paths.ts';
