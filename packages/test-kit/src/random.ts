/**
 * The one seeded PRNG of the tests: the scripted model's own (mulberry32, shipped in @ai4ts/testing), so a random
 * split in a test replays exactly as the model's fragmenting does.
 */
export { seededRandom } from '@ai4ts/testing';
