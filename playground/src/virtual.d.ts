/** The build's module that imports every marble scenario (playground/build.ts). */
declare module 'virtual:scenarios' {}
