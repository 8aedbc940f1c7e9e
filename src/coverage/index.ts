export * from './coverage.ts';
export * from './paths.ts';
export * from './toolOutcomes.ts';
