import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import { testEventStore } from './eventStoreContract.ts';

testEventStore('MemoryEventStore', async () => new MemoryEventStore());
