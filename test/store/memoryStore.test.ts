import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import { testEventStore } from './eventStoreContract.ts';
import { testFollow } from './followContract.ts';

testEventStore('MemoryEventStore', async () => new MemoryEventStore());
testFollow('MemoryEventStore', async () => new MemoryEventStore());
